"""Reading and writing gettext catalogs, in plain Python (no GNU tools needed).

Three formats meet here:

* ``.py``: messages are found by walking each module's syntax tree for calls
  ``_("...")``, ``N_("...")`` (a message marked now, translated where it is
  shown) and ``ngettext("one ...", "many ...", n)``.  Only string literals count:
  ``_(f"...")`` would be a different message for every value, so the code writes
  ``_("... {name} ...").format(name=...)`` instead.
* ``.po`` / ``.pot``: text, one entry per message::

      #: widgets/stepper.py:187
      msgid "Step"
      msgstr "单步"

  with ``msgid_plural`` and ``msgstr[0]``, ``msgstr[1]``... for plural forms,
  and the catalog's header (language, ``Plural-Forms``) as the entry whose
  msgid is empty.
* ``.mo``: the compiled table Python's :mod:`gettext` reads.  GNU's layout: a
  header of seven 32-bit numbers (magic ``0x950412de``, revision 0, the number
  of messages N, where the table of originals starts, where the table of
  translations starts, hash table size 0 and its offset), then the two tables
  of N ``(length, offset)`` pairs, then the strings, each followed by a NUL.
  Originals are sorted (``gettext`` does not need it, GNU tools do); a plural
  message's original is ``singular NUL plural`` and its translation all the
  forms joined by NUL; a message with a context is ``context EOT msgid``.
  Untranslated and ``fuzzy`` entries are left out, so they fall back to English.
"""
from __future__ import annotations

import ast
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]          # autograd_kit/
LOCALE = PACKAGE / "locale"
DOMAIN = "autograd_kit"
POT = LOCALE / f"{DOMAIN}.pot"
MARKERS = {"_": 1, "N_": 1, "ngettext": 2}           # function -> how many messages
PLURAL_FORMS = {
    "zh": "nplurals=1; plural=0;",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
          "(n%100<10 || n%100>=20) ? 1 : 2);",
}


@dataclass
class Entry:
    """One message of a catalog."""

    msgid: str
    msgstr: str = ""
    plural: str | None = None                       # msgid_plural
    forms: list[str] = field(default_factory=list)  # msgstr[0], msgstr[1]...
    context: str | None = None                      # msgctxt
    refs: list[str] = field(default_factory=list)   # "#: file:line"
    flags: set[str] = field(default_factory=set)    # "#, fuzzy, python-brace-format"
    comments: list[str] = field(default_factory=list)  # other "#" lines, kept as they are

    @property
    def key(self) -> tuple:
        return (self.context, self.msgid, self.plural)

    def translations(self) -> list[str]:
        return self.forms if self.plural is not None else [self.msgstr]

    @property
    def translated(self) -> bool:
        return all(self.translations()) and "fuzzy" not in self.flags


# -- finding the messages in the code --------------------------------------------------------
def source_files() -> list[tuple[Path, str]]:
    """``(path, name shown in the .pot)`` for every module of the kit, the widgets
    included (they live in ``widgets/`` beside the package in a checkout)."""
    roots = [(PACKAGE, PACKAGE.parent)]
    outside = PACKAGE.parent / "widgets"
    if not (PACKAGE / "widgets").is_dir() and outside.is_dir():
        roots.append((outside, PACKAGE.parent))
    files = []
    for root, base in roots:
        for path in sorted(root.rglob("*.py")):
            files.append((path, path.relative_to(base).as_posix()))
    return files


def messages_in(source: str, name: str = "<code>") -> list[tuple[str, str | None, int]]:
    """``(msgid, msgid_plural or None, line)`` for each marked message in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        count = MARKERS.get(node.func.id)
        texts = [a.value for a in node.args[:count or 0]
                 if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if count and len(texts) == count:
            found.append((texts[0], texts[1] if count == 2 else None, node.lineno))
    return sorted(found, key=lambda m: m[2])


def extract() -> list[Entry]:
    """Every marked message of the kit, in the order the files and lines give."""
    entries: dict[tuple, Entry] = {}
    for path, shown in source_files():
        for msgid, plural, line in messages_in(path.read_text(encoding="utf-8"), shown):
            entry = entries.setdefault((None, msgid, plural), Entry(
                msgid, plural=plural, forms=["", ""] if plural else []))
            entry.refs.append(f"{shown}:{line}")
            if re.search(r"\{\w+\}", msgid):
                entry.flags.add("python-brace-format")
    return list(entries.values())


# -- .po text ----------------------------------------------------------------------------------
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "a": "\a", "0": "\0"}


def _unquote(text: str) -> str:
    """The string inside one quoted .po line: ``"a \\"b\\""`` -> ``a "b"``."""
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"expected a quoted string, got {text!r}")
    return re.sub(r"\\(.)", lambda m: _UNESCAPES.get(m.group(1), m.group(1)), text[1:-1])


def read_po(text: str) -> list[Entry]:
    """The entries of a ``.po`` or ``.pot`` file (the header is the first, msgid "")."""
    entries: list[Entry] = []
    entry, last = Entry(""), None        # last: the keyword a quoted line continues

    def new_entry() -> Entry:
        if last is not None:             # the entry had its msgid: keep it
            entries.append(entry)
        return Entry("")

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#"):
            if last is not None and last != "msgctxt":
                entry, last = new_entry(), None
            if line.startswith("#:"):
                entry.refs += line[2:].split()
            elif line.startswith("#,"):
                entry.flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            else:
                entry.comments.append(raw)
            continue
        if line.startswith('"'):
            if last is None:
                raise ValueError(f"line {number}: a string that belongs to no keyword")
            keyword, value = last, _unquote(line)
        else:
            keyword, _, rest = line.partition(" ")
            value = _unquote(rest)
            if keyword in ("msgctxt", "msgid") and last not in (None, "msgctxt"):
                entry, last = new_entry(), None
            if keyword == "msgctxt":
                entry.context = ""
            elif keyword == "msgid_plural":
                entry.plural = ""
            elif keyword.startswith("msgstr["):
                entry.forms.append("")
            elif keyword not in ("msgid", "msgstr"):
                raise ValueError(f"line {number}: unknown keyword {keyword!r}")
        if keyword == "msgctxt":
            entry.context += value
        elif keyword == "msgid":
            entry.msgid += value
        elif keyword == "msgid_plural":
            entry.plural += value
        elif keyword == "msgstr":
            entry.msgstr += value
        else:
            entry.forms[-1] += value
        last = keyword
    new_entry()
    return entries


def _quoted(keyword: str, text: str, width: int = 76) -> list[str]:
    """``keyword "text"``, split into several quoted lines when it is long."""
    escaped = "".join(_ESCAPES.get(c, c) for c in text)
    if len(keyword) + len(escaped) + 3 <= width and "\\n" not in escaped[:-2]:
        return [f'{keyword} "{escaped}"']
    pieces, line = [], ""
    for word in re.findall(r"(?:(?!\\n)[^ ])*(?: +|\\n|$)", escaped):
        if line and len(line) + len(word) > width - 2:
            pieces.append(line)
            line = ""
        line += word
        if line.endswith("\\n"):
            pieces.append(line)
            line = ""
    pieces.append(line)
    return [f'{keyword} ""'] + [f'"{p}"' for p in pieces if p]


def write_po(entries: list[Entry]) -> str:
    """The ``.po`` text of ``entries`` (the first is the header)."""
    blocks = []
    for e in entries:
        lines = list(e.comments)
        lines += [f"#: {ref}" for ref in e.refs]
        if e.flags:
            lines.append("#, " + ", ".join(sorted(e.flags)))
        if e.context is not None:
            lines += _quoted("msgctxt", e.context)
        lines += _quoted("msgid", e.msgid)
        if e.plural is not None:
            lines += _quoted("msgid_plural", e.plural)
            for i, form in enumerate(e.forms):
                lines += _quoted(f"msgstr[{i}]", form)
        else:
            lines += _quoted("msgstr", e.msgstr)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def header(language: str = "") -> Entry:
    """The header entry of a catalog for ``language`` ("" for the template)."""
    fields = {"Project-Id-Version": "autograd_kit", "Language": language,
              "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8",
              "Content-Transfer-Encoding": "8bit",
              "Plural-Forms": PLURAL_FORMS.get(language, "nplurals=2; plural=(n != 1);")}
    text = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return Entry("", text, comments=["# The messages of autograd_kit's widgets, magics, "
                                     "explanations, exercises and graph pictures."])


# -- .mo bytes --------------------------------------------------------------------------------
def mo_bytes(entries: list[Entry]) -> bytes:
    """The compiled ``.mo`` catalog of ``entries`` (GNU layout, little-endian)."""
    table = {}
    for e in entries:
        if not e.translated and e.msgid:
            continue
        original = e.msgid if e.plural is None else f"{e.msgid}\0{e.plural}"
        if e.context is not None:
            original = f"{e.context}\x04{original}"
        table[original.encode("utf-8")] = "\0".join(e.translations()).encode("utf-8")
    keys = sorted(table)
    n = len(keys)
    originals_at, translations_at = 28, 28 + 8 * n
    strings_at = 28 + 16 * n
    pairs_o, pairs_t, blob_o, blob_t = [], [], b"", b""
    for k in keys:
        pairs_o.append((len(k), len(blob_o)))
        blob_o += k + b"\0"
    for k in keys:
        pairs_t.append((len(table[k]), len(blob_t)))
        blob_t += table[k] + b"\0"
    start_t = strings_at + len(blob_o)
    out = struct.pack("<7I", 0x950412DE, 0, n, originals_at, translations_at, 0, strings_at)
    out += b"".join(struct.pack("<2I", size, strings_at + at) for size, at in pairs_o)
    out += b"".join(struct.pack("<2I", size, start_t + at) for size, at in pairs_t)
    return out + blob_o + blob_t


# -- the commands -----------------------------------------------------------------------------
def po_paths() -> list[Path]:
    return sorted(LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def update(po: list[Entry], template: list[Entry], language: str) -> list[Entry]:
    """``po`` brought in line with ``template``: its translations kept, new messages
    added untranslated, messages the code no longer has dropped."""
    known = {e.key: e for e in po if e.msgid}
    out = [next((e for e in po if not e.msgid), None) or header(language)]
    forms = re.search(r"nplurals=(\d+)", out[0].msgstr)
    empty = [""] * (int(forms.group(1)) if forms else 2)   # a new plural message's forms
    for t in template[1:]:
        old = known.get(t.key)
        new_forms = list(empty) if t.plural is not None else []
        out.append(Entry(t.msgid, old.msgstr if old else "", t.plural,
                         list(old.forms) if old else new_forms, t.context, list(t.refs),
                         set(t.flags) | (old.flags - {"python-brace-format"} if old else set()),
                         old.comments if old else []))
    return out


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "extract":
        POT.write_text(write_po([header()] + extract()), encoding="utf-8")
        print(f"wrote {POT.name}")
    elif command == "update":
        template = read_po(POT.read_text(encoding="utf-8"))
        for path in po_paths():
            lang = path.parents[1].name
            path.write_text(write_po(update(read_po(path.read_text(encoding="utf-8")),
                                            template, lang)), encoding="utf-8")
            print(f"updated {lang}")
    elif command == "compile":
        for path in po_paths():
            path.with_suffix(".mo").write_bytes(mo_bytes(read_po(path.read_text("utf-8"))))
            print(f"compiled {path.parents[1].name}")
    elif command == "check":
        missing = [(p.parents[1].name, e.msgid) for p in po_paths()
                   for e in read_po(p.read_text("utf-8")) if e.msgid and not e.translated]
        for lang, msgid in missing:
            print(f"{lang}: untranslated: {msgid!r}")
        return 1 if missing else 0
    else:
        print("usage: python -m autograd_kit.locale extract|update|compile|check")
        return 2
    return 0
