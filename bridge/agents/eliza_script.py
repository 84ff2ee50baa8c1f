"""A classic ELIZA engine running a DOCTOR-style script.

The engine follows Weizenbaum's design: the input is cut into sentences, the first sentence
holding a keyword is kept, its keywords are tried from the highest rank down, and the first
decomposition pattern that matches picks a reassembly template. Template slots ``(n)`` refer to
the n-th element of the decomposition pattern (every element counts, literals included), and the
text that fills them is reflected (``my`` becomes ``your``, ``I am`` becomes ``you are``...).
A reassembly may be ``goto <keyword>`` to borrow another keyword's rules. Sentences about ``my``
also leave a memory behind, brought back when a later input holds no keyword at all.

Pure standard library, no I/O. ``Eliza(seed=...)`` makes the choice among reassemblies
reproducible.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass

__all__ = ["Eliza", "reflect"]


# --------------------------------------------------------------------------------------------
# The script
# --------------------------------------------------------------------------------------------

GREETINGS = (
    "How do you do. Please tell me your problem.",
    "Hello. What would you like to talk about today?",
    "Please sit down and tell me what is troubling you.",
)

GOODBYES = (
    "Goodbye. It was nice talking to you.",
    "Goodbye. Thank you for talking to me.",
    "Take care. Come back whenever you like.",
)

FALLBACKS = (
    "I'm not sure I understand you fully.",
    "Please go on.",
    "What does that suggest to you?",
    "Do you feel strongly about discussing such things?",
    "That is interesting. Please continue.",
    "Tell me more about that.",
    "Does talking about this bother you?",
)

# Words rewritten before anything else looks at the input (spelling variants and the
# contractions the patterns expect spelt out).
PRE_SUBSTITUTIONS: dict[str, tuple[str, ...]] = {
    "dont": ("don't",),
    "cant": ("can't",),
    "wont": ("won't",),
    "im": ("i", "am"),
    "i'm": ("i", "am"),
    "you're": ("you", "are"),
    "youre": ("you", "are"),
    "recollect": ("remember",),
    "dreamt": ("dreamed",),
    "dreams": ("dream",),
    "maybe": ("perhaps",),
    "when": ("what",),
    "certainly": ("yes",),
    "machine": ("computer",),
    "machines": ("computer",),
    "computers": ("computer",),
    "were": ("was",),
    "same": ("alike",),
    "identical": ("alike",),
    "similar": ("alike",),
    "apologize": ("apologise",),
    "mom": ("mother",),
    "mum": ("mother",),
    "dad": ("father",),
    "everybody": ("everyone",),
    "goodbye": ("bye",),
}

# Words a ``@group`` pattern element matches.
SYNONYMS: dict[str, frozenset[str]] = {
    "belief": frozenset({"belief", "feel", "think", "believe", "wish"}),
    "family": frozenset(
        {
            "family",
            "mother",
            "father",
            "sister",
            "brother",
            "wife",
            "husband",
            "children",
            "child",
            "son",
            "daughter",
            "parents",
        }
    ),
    "desire": frozenset({"desire", "want", "need", "crave"}),
    "sad": frozenset({"sad", "unhappy", "depressed", "sick", "miserable", "lonely", "upset"}),
    "happy": frozenset({"happy", "elated", "glad", "better", "cheerful", "delighted"}),
    "cannot": frozenset({"cannot", "can't"}),
    "everyone": frozenset({"everyone", "nobody", "noone", "everything", "nothing"}),
    "be": frozenset({"be", "am", "is", "are", "was"}),
}

# keyword -> (rank, [(decomposition, [reassembly, ...]), ...])
_RawRules = list[tuple[str, list[str]]]
SCRIPT: dict[str, tuple[int, _RawRules]] = {
    "sorry": (
        0,
        [
            (
                "*",
                [
                    "Please don't apologise.",
                    "Apologies are not necessary.",
                    "I've told you that apologies are not required.",
                    "There is no need to be sorry here.",
                ],
            ),
        ],
    ),
    "apologise": (0, [("*", ["goto sorry"])]),
    "remember": (
        5,
        [
            (
                "* i remember *",
                [
                    "Do you often think of (4)?",
                    "Does thinking of (4) bring anything else to mind?",
                    "What else do you remember?",
                    "Why do you remember (4) just now?",
                    "What in the present situation reminds you of (4)?",
                ],
            ),
            (
                "* do you remember *",
                [
                    "Did you think I would forget (5)?",
                    "Why do you think I should recall (5) now?",
                    "What about (5)?",
                    "You mentioned (5).",
                ],
            ),
        ],
    ),
    "feel": (
        3,
        [
            (
                "* i feel *",
                [
                    "Why do you feel (4)?",
                    "Do you often feel (4)?",
                    "What makes you feel (4)?",
                    "When did you first feel (4)?",
                    "Tell me more about feeling (4).",
                ],
            ),
            ("*", ["Tell me more about such feelings.", "Do you often feel that way?"]),
        ],
    ),
    "if": (
        3,
        [
            (
                "* if *",
                [
                    "Do you think it's likely that (3)?",
                    "Do you wish that (3)?",
                    "What do you know about (3)?",
                    "Really, if (3)?",
                ],
            ),
        ],
    ),
    "dreamed": (
        4,
        [
            (
                "* i dreamed *",
                [
                    "Really, (4)?",
                    "Have you ever fantasised (4) while you were awake?",
                    "Have you ever dreamed (4) before?",
                ],
            ),
            ("*", ["goto dream"]),
        ],
    ),
    "dream": (
        3,
        [
            (
                "*",
                [
                    "What does that dream suggest to you?",
                    "Do you dream often?",
                    "What persons appear in your dreams?",
                    "Do you believe that dreams have something to do with your problem?",
                ],
            ),
        ],
    ),
    "perhaps": (
        0,
        [
            (
                "*",
                [
                    "You don't seem quite certain.",
                    "Why the uncertain tone?",
                    "Can't you be more positive?",
                    "You aren't sure?",
                    "Don't you know?",
                ],
            ),
        ],
    ),
    "name": (
        15,
        [
            (
                "*",
                [
                    "I am not interested in names.",
                    "I've told you before, I don't care about names. Please continue.",
                ],
            ),
        ],
    ),
    "deutsch": (0, [("*", ["I'm sorry, I speak only English."])]),
    "francais": (0, [("*", ["goto deutsch"])]),
    "italiano": (0, [("*", ["goto deutsch"])]),
    "espanol": (0, [("*", ["goto deutsch"])]),
    "hello": (
        0,
        [
            (
                "*",
                [
                    "How do you do. Please state your problem.",
                    "Hi. What seems to be your problem?",
                ],
            ),
        ],
    ),
    "hi": (0, [("*", ["goto hello"])]),
    "bye": (0, [("*", list(GOODBYES))]),
    "how": (
        1,
        [
            (
                "* how are you *",
                ["I don't have feelings, but I'm functioning well. What about you?"],
            ),
            ("*", ["goto what"]),
        ],
    ),
    "computer": (
        50,
        [
            (
                "*",
                [
                    "Do computers worry you?",
                    "Why do you mention computers?",
                    "What do you think machines have to do with your problem?",
                    "Don't you think computers can help people?",
                    "What about machines worries you?",
                    "What do you think about machines?",
                ],
            ),
        ],
    ),
    "am": (
        0,
        [
            (
                "* am i *",
                [
                    "Do you believe you are (4)?",
                    "Would you want to be (4)?",
                    "Do you wish I would tell you you are (4)?",
                    "What would it mean if you were (4)?",
                ],
            ),
            ("*", ["Why do you say 'am'?", "I don't understand that."]),
        ],
    ),
    "are": (
        0,
        [
            (
                "* are you *",
                [
                    "Why are you interested in whether I am (4) or not?",
                    "Would you prefer if I weren't (4)?",
                    "Perhaps I am (4) in your fantasies.",
                    "Do you sometimes think I am (4)?",
                ],
            ),
            (
                "* are *",
                [
                    "Did you think they might not be (3)?",
                    "Would you like it if they were not (3)?",
                    "What if they were not (3)?",
                    "Possibly they are (3).",
                ],
            ),
        ],
    ),
    "your": (
        0,
        [
            (
                "* your *",
                [
                    "Why are you concerned over my (3)?",
                    "What about your own (3)?",
                    "Are you worried about someone else's (3)?",
                    "Really, my (3)?",
                ],
            ),
        ],
    ),
    "was": (
        2,
        [
            (
                "* was i *",
                [
                    "What if you were (4)?",
                    "Do you think you were (4)?",
                    "Were you (4)?",
                    "What would it mean if you were (4)?",
                ],
            ),
            (
                "* i was *",
                [
                    "Were you really?",
                    "Why do you tell me you were (4) now?",
                    "Perhaps I already know you were (4).",
                ],
            ),
            (
                "* was you *",
                [
                    "Would you like to believe I was (4)?",
                    "What suggests that I was (4)?",
                    "What do you think?",
                    "Perhaps I was (4).",
                    "What if I had been (4)?",
                ],
            ),
            ("* you was *", ["goto you"]),
        ],
    ),
    "i": (
        0,
        [
            (
                "* i @desire *",
                [
                    "What would it mean to you if you got (4)?",
                    "Why do you want (4)?",
                    "Suppose you got (4) soon.",
                    "What if you never got (4)?",
                    "What would getting (4) mean to you?",
                ],
            ),
            (
                "* i am * @sad *",
                [
                    "I am sorry to hear that you are (5).",
                    "Do you think coming here will help you not to be (5)?",
                    "I'm sure it's not pleasant to be (5).",
                    "Can you explain what made you (5)?",
                ],
            ),
            (
                "* i am * @happy *",
                [
                    "How have I helped you to be (5)?",
                    "Has your treatment made you (5)?",
                    "What makes you (5) just now?",
                    "Can you explain why you are suddenly (5)?",
                ],
            ),
            ("* i was *", ["goto was"]),
            (
                "* i @belief i *",
                [
                    "Do you really think so?",
                    "But you are not sure you (5).",
                    "Do you really doubt you (5)?",
                ],
            ),
            (
                "* i am *",
                [
                    "Is it because you are (4) that you came to me?",
                    "How long have you been (4)?",
                    "Do you believe it is normal to be (4)?",
                    "Do you enjoy being (4)?",
                    "Did you come to me because you are (4)?",
                ],
            ),
            (
                "* i @cannot *",
                [
                    "How do you know that you can't (4)?",
                    "Have you tried?",
                    "Perhaps you could (4) now.",
                    "Do you really want to be able to (4)?",
                ],
            ),
            (
                "* i don't *",
                [
                    "Don't you really (4)?",
                    "Why don't you (4)?",
                    "Do you wish to be able to (4)?",
                    "Does that trouble you?",
                ],
            ),
            (
                "* i * you *",
                [
                    "Perhaps in your fantasies we (3) each other.",
                    "Do you wish to (3) me?",
                    "You seem to need to (3) me.",
                    "Do you (3) anyone else?",
                ],
            ),
            (
                "* i *",
                [
                    "You say you (3)?",
                    "Can you elaborate on that?",
                    "Do you say you (3) for some special reason?",
                    "That's quite interesting.",
                ],
            ),
        ],
    ),
    "you": (
        0,
        [
            ("* you remind me of *", ["goto alike"]),
            (
                "* you are *",
                [
                    "What makes you think I am (4)?",
                    "Does it please you to believe I am (4)?",
                    "Do you sometimes wish you were (4)?",
                    "Perhaps you would like to be (4).",
                ],
            ),
            (
                "* you * me *",
                [
                    "Why do you think I (3) you?",
                    "You like to think I (3) you, don't you?",
                    "What makes you think I (3) you?",
                    "Really, I (3) you?",
                    "Do you wish to believe I (3) you?",
                    "Suppose I did (3) you. What would that mean?",
                ],
            ),
            (
                "* you *",
                [
                    "We were discussing you, not me.",
                    "Oh, I (3)?",
                    "You're not really talking about me, are you?",
                    "What are your feelings now?",
                ],
            ),
        ],
    ),
    "yes": (
        0,
        [
            ("*", ["You seem to be quite positive.", "You are sure.", "I see.", "I understand."]),
        ],
    ),
    "no": (
        0,
        [
            (
                "*",
                [
                    "Are you saying no just to be negative?",
                    "You are being a bit negative.",
                    "Why not?",
                    "Why 'no'?",
                ],
            ),
        ],
    ),
    "my": (
        2,
        [
            (
                "* my * @family *",
                [
                    "Tell me more about your family.",
                    "Who else in your family (5)?",
                    "Your (4)?",
                    "What else comes to mind when you think of your (4)?",
                ],
            ),
            (
                "* my *",
                [
                    "Your (3)?",
                    "Why do you say your (3)?",
                    "Does that suggest anything else which belongs to you?",
                    "Is it important to you that your (3)?",
                ],
            ),
        ],
    ),
    "can": (
        0,
        [
            (
                "* can you *",
                [
                    "You believe I can (4), don't you?",
                    "You want me to be able to (4).",
                    "Perhaps you would like to be able to (4) yourself.",
                ],
            ),
            (
                "* can i *",
                [
                    "Whether or not you can (4) depends on you more than on me.",
                    "Do you want to be able to (4)?",
                    "Perhaps you don't want to (4).",
                ],
            ),
        ],
    ),
    "what": (
        0,
        [
            (
                "*",
                [
                    "Why do you ask?",
                    "Does that question interest you?",
                    "What is it you really want to know?",
                    "Are such questions much on your mind?",
                    "What answer would please you most?",
                    "What do you think?",
                    "What comes to mind when you ask that?",
                    "Have you asked such questions before?",
                    "Have you asked anyone else?",
                ],
            ),
        ],
    ),
    "because": (
        0,
        [
            (
                "*",
                [
                    "Is that the real reason?",
                    "Don't any other reasons come to mind?",
                    "Does that reason seem to explain anything else?",
                    "What other reasons might there be?",
                ],
            ),
        ],
    ),
    "why": (
        0,
        [
            (
                "* why don't you *",
                [
                    "Do you believe I don't (5)?",
                    "Perhaps I will (5) in good time.",
                    "Should you (5) yourself?",
                    "You want me to (5)?",
                ],
            ),
            (
                "* why can't i *",
                [
                    "Do you think you should be able to (5)?",
                    "Do you want to be able to (5)?",
                    "Do you believe this will help you to (5)?",
                    "Have you any idea why you can't (5)?",
                ],
            ),
            ("*", ["goto what"]),
        ],
    ),
    "everyone": (
        2,
        [
            (
                "* @everyone *",
                [
                    "Really, (2)?",
                    "Surely not (2).",
                    "Can you think of anyone in particular?",
                    "Who, for example?",
                    "Are you thinking of a very special person?",
                    "You have a particular person in mind, don't you?",
                ],
            ),
        ],
    ),
    "nobody": (2, [("*", ["goto everyone"])]),
    "noone": (2, [("*", ["goto everyone"])]),
    "always": (
        1,
        [
            (
                "*",
                [
                    "Can you think of a specific example?",
                    "When?",
                    "What incident are you thinking of?",
                    "Really, always?",
                ],
            ),
        ],
    ),
    "alike": (
        10,
        [
            (
                "*",
                [
                    "In what way?",
                    "What resemblance do you see?",
                    "What does that similarity suggest to you?",
                    "What other connections do you see?",
                    "What do you suppose that resemblance is?",
                    "What is the connection, do you suppose?",
                    "Could there really be some connection?",
                    "How?",
                ],
            ),
        ],
    ),
    "like": (
        10,
        [
            ("* @be * like *", ["goto alike"]),
        ],
    ),
    "different": (
        0,
        [
            (
                "*",
                [
                    "How is it different?",
                    "What differences do you see?",
                    "What does that difference suggest to you?",
                    "What other distinctions do you see?",
                ],
            ),
        ],
    ),
}

# Rules whose answers are kept for later, when the "my" keyword is seen.
MEMORY_RULES: dict[str, list[tuple[str, list[str]]]] = {
    "my": [
        (
            "* my *",
            [
                "Let's discuss further why your (3).",
                "Earlier you said your (3).",
                "But your (3).",
                "Does that have anything to do with the fact that your (3)?",
            ],
        ),
    ],
}

MEMORY_LIMIT = 8

# Pronoun reflection: what the speaker said about themselves, said back to them.
_REFLECTIONS: dict[str, str] = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "am": "are",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "yourselves": "ourselves",
    "i'd": "you'd",
    "i've": "you've",
    "i'll": "you'll",
    "you'd": "I'd",
    "you've": "I've",
    "you'll": "I'll",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
}

# After these words, a reflected "you" is the subject ("I"); elsewhere it is an object ("me").
_SUBJECT_CONTEXT = frozenset(
    {
        "and",
        "or",
        "but",
        "that",
        "because",
        "if",
        "so",
        "when",
        "what",
        "why",
        "how",
        "where",
        "while",
        "whether",
        "then",
        "since",
        "though",
        "unless",
        "until",
    }
)
_VERBS_AFTER_SUBJECT = frozenset(
    {
        "are",
        "were",
        "was",
        "am",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "should",
        "shall",
        "do",
        "did",
        "don't",
        "didn't",
        "can't",
        "won't",
        "might",
        "must",
        "may",
        "think",
        "feel",
        "want",
        "need",
        "know",
        "like",
        "love",
        "hate",
        "said",
        "say",
        "seem",
        "always",
        "never",
    }
)


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: tuple[str, ...]
    reassemblies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Keyword:
    word: str
    rank: int
    rules: tuple[_Rule, ...]


def _compile(raw: _RawRules) -> tuple[_Rule, ...]:
    return tuple(
        _Rule(tuple(pattern.split()), tuple(reassemblies)) for pattern, reassemblies in raw
    )


_KEYWORDS: dict[str, _Keyword] = {
    word: _Keyword(word, rank, _compile(rules)) for word, (rank, rules) in SCRIPT.items()
}
_MEMORY: dict[str, tuple[_Rule, ...]] = {
    word: _compile(rules) for word, rules in MEMORY_RULES.items()
}

_TOKEN = re.compile(r"[a-z0-9']+|[.!?;]")
_SENTENCE_END = frozenset(".!?;")
_SLOT = re.compile(r"\((\d+)\)")


def _tokenize(text: str) -> list[str]:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    words: list[str] = []
    for token in _TOKEN.findall(text):
        token = token.strip("'") or token
        if not token:
            continue
        words.extend(PRE_SUBSTITUTIONS.get(token, (token,)))
    return words


def _sentences(words: list[str]) -> list[list[str]]:
    sentences: list[list[str]] = [[]]
    for word in words:
        if word in _SENTENCE_END:
            if sentences[-1]:
                sentences.append([])
        else:
            sentences[-1].append(word)
    return [s for s in sentences if s]


def _match(pattern: tuple[str, ...], words: list[str]) -> list[list[str]] | None:
    """Match ``words`` against ``pattern``; one captured word list per pattern element."""

    def element_matches(element: str, word: str) -> bool:
        if element.startswith("@"):
            return word in SYNONYMS.get(element[1:], ())
        return element == word

    def go(p: int, w: int) -> list[list[str]] | None:
        if p == len(pattern):
            return [] if w == len(words) else None
        element = pattern[p]
        if element == "*":
            # Shortest first: the classic matcher binds a wildcard as early as it can.
            for end in range(w, len(words) + 1):
                rest = go(p + 1, end)
                if rest is not None:
                    return [words[w:end], *rest]
            return None
        if w < len(words) and element_matches(element, words[w]):
            rest = go(p + 1, w + 1)
            if rest is not None:
                return [[words[w]], *rest]
        return None

    return go(0, 0)


def reflect(words: list[str] | str) -> str:
    """Turn a fragment around: "i am sad about my job" -> "you are sad about your job"."""
    if isinstance(words, str):
        words = _tokenize(words)
    out: list[str] = []
    for index, word in enumerate(words):
        previous_out = out[-1] if out else ""
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "you":
            subject = (
                index == 0
                or previous_out.lower() in _SUBJECT_CONTEXT
                or following in _VERBS_AFTER_SUBJECT
            )
            out.append("I" if subject else "me")
        elif word in ("are", "were", "was") and previous_out in ("I",):
            out.append({"are": "am", "were": "was", "was": "was"}[word])
        elif word in ("am", "was") and previous_out == "you":
            out.append({"am": "are", "was": "were"}[word])
        elif word in _REFLECTIONS:
            out.append(_REFLECTIONS[word])
        else:
            out.append(word)
    return " ".join(out)


class Eliza:
    """One conversation with the DOCTOR. Keeps its own memory and random state."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)
        self._memory: deque[str] = deque(maxlen=MEMORY_LIMIT)
        # Last reassembly index used per rule, so a rule does not repeat itself back to back.
        self._last_choice: dict[int, int] = {}

    def greeting(self) -> str:
        return self._random.choice(GREETINGS)

    def respond(self, text: str) -> str:
        sentences = _sentences(_tokenize(text))
        if not sentences:
            return "Please say something, even if it is only a little."
        for words in sentences:
            keywords = self._keywords_in(words)
            if not keywords:
                continue
            if any(keyword.word in _MEMORY for keyword in keywords):
                self._remember(words, keywords)
            for keyword in keywords:
                reply = self._apply(keyword, words, hops=0)
                if reply is not None:
                    return reply
        if self._memory:
            return self._memory.popleft()
        return self._choose(FALLBACKS, key=-1)

    # ---- internals ---------------------------------------------------------------------

    @staticmethod
    def _keywords_in(words: list[str]) -> list[_Keyword]:
        seen: dict[str, _Keyword] = {}
        for word in words:
            keyword = _KEYWORDS.get(word)
            if keyword is not None and word not in seen:
                seen[word] = keyword
        # Highest rank first; among equals, the one said first.
        return sorted(seen.values(), key=lambda k: -k.rank)

    def _apply(self, keyword: _Keyword, words: list[str], hops: int) -> str | None:
        for rule in keyword.rules:
            parts = _match(rule.pattern, words)
            if parts is None:
                continue
            template = self._choose(rule.reassemblies, key=id(rule))
            if template.startswith("goto "):
                target = _KEYWORDS.get(template[5:].strip())
                if target is None or hops > 4:
                    return None
                return self._apply(target, words, hops + 1)
            return self._fill(template, parts)
        return None

    def _remember(self, words: list[str], keywords: list[_Keyword]) -> None:
        for keyword in keywords:
            for rule in _MEMORY.get(keyword.word, ()):
                parts = _match(rule.pattern, words)
                if parts is not None:
                    self._memory.append(
                        self._fill(self._choose(rule.reassemblies, key=id(rule)), parts)
                    )
                    return

    def _choose(self, options: tuple[str, ...], key: int) -> str:
        if len(options) == 1:
            return options[0]
        last = self._last_choice.get(key)
        candidates = [i for i in range(len(options)) if i != last]
        index = self._random.choice(candidates)
        self._last_choice[key] = index
        return options[index]

    @staticmethod
    def _fill(template: str, parts: list[list[str]]) -> str:
        def slot(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            if 0 <= index < len(parts):
                return reflect(parts[index])
            return ""

        text = _SLOT.sub(slot, template)
        text = re.sub(r"\s+", " ", text).strip()
        text = re.sub(r"\s+([?.!,])", r"\1", text)
        return text[:1].upper() + text[1:]
