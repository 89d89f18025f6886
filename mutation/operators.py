"""The mutants of a C file: one small change each, named so that the name
survives line moves.

A mutant is named by its file, the function it is in, the exact text it
changes and what it becomes, and its occurrence: the how-many-th change of
that same text to that same replacement in that function (counted from 1).
Lines and columns are not part of the name: moving a function, or adding a
line above it, leaves every name as it was.

The lexer knows just enough C for that: comments, strings, character
constants and preprocessor lines are skipped whole (nothing in them is
mutated), and a function is a top-level brace block whose opening brace
follows a closing parenthesis. Initialisers and declarations outside
functions are never mutated.
"""

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?[uUlLfF]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.|[-+*/%&|^!~<>=?:;,.(){}\[\]])
""", re.S | re.X)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


def lex(text):
    """The tokens of text, preprocessor lines, comments and whitespace left
    out. A preprocessor line runs to its first newline not after a
    backslash. Raises ValueError on a byte it cannot read."""
    out, pos, line_start = [], 0, True
    while pos < len(text):
        if line_start:
            m = re.match(r"[ \t]*#", text[pos:pos + 256])
            if m:
                end = pos
                while True:
                    nl = text.find("\n", end)
                    if nl < 0:
                        end = len(text)
                        break
                    if text[nl - 1] == "\\":
                        end = nl + 1
                        continue
                    end = nl
                    break
                pos = end
                continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError("cannot lex at offset %d: %r" % (pos, text[pos:pos + 20]))
        kind = m.lastgroup
        if kind == "ws":
            line_start = "\n" in m.group()
        else:
            line_start = False
            if kind != "comment":
                out.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


def functions(tokens):
    """(name, first, last): each function definition, first and last the
    indices of its braces in tokens."""
    out, depth, i = [], 0, 0
    while i < len(tokens):
        t = tokens[i]
        if t.text == "{":
            if depth == 0 and i > 0 and tokens[i - 1].text == ")":
                j, level = i - 1, 0
                while j >= 0:  # back to the parameter list's "("
                    if tokens[j].text == ")":
                        level += 1
                    elif tokens[j].text == "(":
                        level -= 1
                        if level == 0:
                            break
                    j -= 1
                name = tokens[j - 1].text if j > 0 and tokens[j - 1].kind == "ident" else None
                end, level = i, 0
                while end < len(tokens):
                    if tokens[end].text == "{":
                        level += 1
                    elif tokens[end].text == "}":
                        level -= 1
                        if level == 0:
                            break
                    end += 1
                if name:
                    out.append((name, i, end))
                i = end + 1
                continue
            depth += 1
        elif t.text == "}":
            depth -= 1
        i += 1
    return out


@dataclass(frozen=True)
class Mutant:
    file: str      # path relative to the source root
    func: str
    op: str        # the operator's name (see OPERATORS)
    orig: str      # the text replaced, whitespace collapsed
    repl: str      # what it becomes
    occurrence: int
    start: int     # offsets of the replaced text in the file
    end: int
    line: int      # for people: where it is now (not part of the name)

    @property
    def id(self):
        return "%s:%s: %s -> %s #%d" % (self.file, self.func, self.orig, self.repl or "''",
                                          self.occurrence)

    def apply(self, text):
        """text with this mutant's change made."""
        return text[:self.start] + self.repl + text[self.end:]


# relational and logical operators: each to its nearest wrong neighbour.
_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
         "&&": "||", "||": "&&", "++": "--", "--": "++"}
_VALUE_END = ("ident", "number", "string", "char")
OPERATORS = ("relational", "logical", "arith", "constant", "bool", "return",
             "negate", "not", "call")


def _is_binary(tokens, i):
    """Whether the + or - at i is binary (follows a value)."""
    if i == 0:
        return False
    p = tokens[i - 1]
    if p.text in ("return", "case", "sizeof"):
        return False
    return p.kind in _VALUE_END or p.text in (")", "]")


def _is_declaration_size(tokens, i):
    """Whether the number at i is an array size in a declaration
    (char buf[64]): changing it changes room, not a rule."""
    return (i >= 3 and tokens[i - 1].text == "[" and tokens[i - 2].kind == "ident"
            and (tokens[i - 3].kind == "ident" or tokens[i - 3].text in ("*", ","))
            and tokens[i - 3].text not in ("return", "sizeof"))


def _matching(tokens, i, open_, close):
    level = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == open_:
            level += 1
        elif tokens[j].text == close:
            level -= 1
            if level == 0:
                return j
    return None


def _span_text(text, tokens, a, b):
    return " ".join(text[tokens[a].start:tokens[b].end].split())


def zero_enumerators(text):
    """The enumerators of text's enums whose value is 0 (the first one
    without an initialiser, or one "= 0"): returning one is returning 0."""
    out = set()
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", re.sub(r"/\*.*?\*/|//[^\n]*", "",
                                                                   text, flags=re.S)):
        for i, item in enumerate(x.strip() for x in body.split(",")):
            m = re.match(r"([A-Za-z_]\w*)\s*(?:=\s*(\S+))?$", item)
            if m and (m.group(2) in ("0", "0u") or (i == 0 and m.group(2) is None)):
                out.add(m.group(1))
    return out


def _candidates(text, tokens, first, last, zero=frozenset()):
    """(op, start, end, orig, repl) for every change in tokens[first..last]."""
    for i in range(first + 1, last):
        t = tokens[i]
        prev = tokens[i - 1].text
        if t.kind == "op" and t.text in _SWAP:
            kind = "logical" if t.text in ("&&", "||") else "relational"
            if t.text in ("++", "--"):
                kind = "arith"
            yield kind, t.start, t.end, t.text, _SWAP[t.text]
        elif t.kind == "op" and t.text in ("+", "-") and _is_binary(tokens, i):
            yield "arith", t.start, t.end, t.text, "-" if t.text == "+" else "+"
        elif t.kind == "op" and t.text == "!" and tokens[i + 1].text != "=":
            yield "not", t.start, t.end, "!", ""
        elif t.kind == "number" and re.fullmatch(r"[0-9]+[uUlL]*", t.text) \
                and not _is_declaration_size(tokens, i):
            v = int(re.match(r"[0-9]+", t.text).group())
            yield "constant", t.start, t.end, t.text, "1" if v == 0 else str(v - 1) if v == 1 \
                else str(v + 1)
        elif t.kind == "ident" and t.text in ("true", "false"):
            yield "bool", t.start, t.end, t.text, "false" if t.text == "true" else "true"
        elif t.kind == "ident" and t.text == "return" and tokens[i + 1].text != ";":
            j = i + 1  # the returned expression, to its ";"
            while j < last and tokens[j].text != ";":
                j += 1
            orig = _span_text(text, tokens, i + 1, j - 1)
            if orig not in ("0", "false", "NULL") and orig not in zero:
                yield "return", tokens[i + 1].start, tokens[j - 1].end, orig, "0"
        elif t.kind == "ident" and t.text in ("if", "while") and tokens[i + 1].text == "(":
            close = _matching(tokens, i + 1, "(", ")")
            if close is not None and not _one_comparison(tokens, i + 2, close):
                orig = _span_text(text, tokens, i + 1, close)
                yield "negate", tokens[i + 1].start, tokens[close].end, orig, "(!%s)" % orig
        elif t.kind == "ident" and prev in (";", "{", "}", ")", "else") \
                and tokens[i + 1].text == "(" and t.text not in ("if", "while", "for",
                                                                  "switch", "return", "sizeof"):
            close = _matching(tokens, i + 1, "(", ")")
            if close is not None and close + 1 < last and tokens[close + 1].text == ";" \
                    and not (prev == ")" and _is_cast(tokens, i - 1)):
                yield "call", t.start, tokens[close + 1].end, \
                    _span_text(text, tokens, i, close + 1), "(void)0;"


def _one_comparison(tokens, a, b):
    """Whether tokens[a:b] is one comparison and nothing else at its top
    level (x == 0): its negation is already the relational mutant."""
    level, rel = 0, 0
    for t in tokens[a:b]:
        if t.text in ("(", "["):
            level += 1
        elif t.text in (")", "]"):
            level -= 1
        elif level == 0 and t.text in ("&&", "||", "?"):
            return False
        elif level == 0 and t.text in ("==", "!=", "<", "<=", ">", ">="):
            rel += 1
    return rel == 1


def _is_cast(tokens, close):
    """Whether the ")" at close ends a cast ((void)f(x);), where the call
    is part of an expression, rather than an if, while, for or else head,
    after which it is a statement of its own."""
    level = 0
    for j in range(close, -1, -1):
        if tokens[j].text == ")":
            level += 1
        elif tokens[j].text == "(":
            level -= 1
            if level == 0:
                return j == 0 or tokens[j - 1].text not in ("if", "while", "for", "else")
    return True


def mutants(path, text, operators=OPERATORS, zero=frozenset()):
    """Every mutant of text (the file at path, relative to the source root),
    in file order, of the given operators. zero: names whose value is 0
    (see zero_enumerators), which a returned value is not changed from."""
    tokens = lex(text)
    zero = set(zero) | zero_enumerators(text)
    out, seen = [], {}
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for name, first, last in functions(tokens):
        for op, start, end, orig, repl in _candidates(text, tokens, first, last, zero):
            if op not in operators:
                continue
            key = (name, orig, repl)
            seen[key] = seen.get(key, 0) + 1
            line = _line_of(line_starts, start)
            out.append(Mutant(path, name, op, orig, repl, seen[key], start, end, line))
    return out


def _line_of(line_starts, offset):
    lo, hi = 0, len(line_starts)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if line_starts[mid] <= offset:
            lo = mid
        else:
            hi = mid
    return lo + 1
