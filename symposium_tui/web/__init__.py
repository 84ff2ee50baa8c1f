"""`symposium-tui web`: the console in a browser (`server`: textual-serve behind a guard and a
token; `driver`: the Textual driver that makes each page's console leave with its browser)."""
