/* The least a process between an ACP client and its agent can do: copy bytes both ways.
 *
 *     cc -O2 -pthread byte_relay.c -o byte_relay && ./byte_relay AGENT [ARGS...]
 *
 * `bench_acp_proxy.py` builds it (when a C compiler is installed) and measures it beside the
 * proxy, in the same run: a floor for what any relaying process can reach on this machine. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

struct pump { int from, to; };

static void *copy(void *arg) {
    struct pump *p = arg;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(p->from, buf, sizeof buf)) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(p->to, buf + done, (size_t)(n - done));
            if (w <= 0) return NULL;
            done += w;
        }
    }
    close(p->to);
    return NULL;
}

int main(int argc, char **argv) {
    int to_agent[2], from_agent[2];
    if (argc < 2 || pipe(to_agent) || pipe(from_agent)) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        dup2(to_agent[0], 0);
        dup2(from_agent[1], 1);
        close(to_agent[1]);
        close(from_agent[0]);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    close(to_agent[0]);
    close(from_agent[1]);
    struct pump in = {0, to_agent[1]}, out = {from_agent[0], 1};
    pthread_t t_in, t_out;
    pthread_create(&t_in, NULL, copy, &in);
    pthread_create(&t_out, NULL, copy, &out);
    pthread_join(t_out, NULL);
    int status;
    waitpid(pid, &status, 0);
    return 0;
}
