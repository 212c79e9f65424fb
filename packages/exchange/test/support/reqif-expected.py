"""
What a ReqIF file holds, read by StrictDoc's `reqif` library (vendored in ../vendor/strictdoc-reqif),
not by the RXS importer: the expectation that reqif-corpus.test.ts compares the importer with.

    PYTHONPATH=packages/exchange/test/vendor/strictdoc-reqif \
      /usr/bin/python3 -B reqif-expected.py FILE...            # one JSON document per file, on stdout
    ... reqif-expected.py --write DIR FILE...                  # DIR/<file name>.json each

A .reqifz archive is read through the one .reqif file it holds. Per file it gives:

- `tool`: the header's REQ-IF-TOOL-ID and SOURCE-TOOL-ID;
- `specObjectTypes`: the SPEC-OBJECT-TYPEs' LONG-NAMEs, in file order;
- `objects`, in file order: each SPEC-OBJECT's IDENTIFIER, its SPEC-OBJECT-TYPE's LONG-NAME, the
  name RXS gives the record (NAME RULE below) and where it comes from, its `values` by attribute
  definition LONG-NAME (the definition's IDENTIFIER when it has none, the IDENTIFIER referred to
  when the file does not define it: a fragment's), and `defaults`: the
  DEFAULT-VALUEs of its type's definitions it carries no value for (ReqIF: they apply to it);
- `relations`: each SPEC-RELATION's source, target and SPEC-RELATION-TYPE LONG-NAME;
- `specifications`: each SPECIFICATION's IDENTIFIER and LONG-NAME, and its `hierarchy`: each
  SPEC-HIERARCHY depth-first, as the IDENTIFIER of the spec object it places and its level (1: a
  child of the SPECIFICATION).

A value is `{"kind": <ATTRIBUTE-VALUE-* kind>, "value": ...}`: STRING and DATE as the text of
THE-VALUE; INTEGER and REAL as numbers; BOOLEAN as true or false; ENUMERATION as the list of its
values' labels (an ENUM-VALUE's LONG-NAME, else its IDENTIFIER), with their `keys` (the
EMBEDDED-VALUE's OTHER-CONTENT, null when absent); XHTML as its text (XHTML TEXT below), with the
files of its `<object>`s as `embedded`.

NAME RULE: the first of these the object has that is not blank: the value of the attribute named
`ReqIF.Name`; the SPEC-OBJECT's LONG-NAME; the value of `ReqIF.ChapterName`; the first line of the
value of `ReqIF.Text` that is not blank, its spaces collapsed, cut to at most 80 characters (past
80, cut after the last whole word within the first 79 when that word ends past character 40, else
at 79 characters, and "…" added). None of them: no name (null).

XHTML TEXT: what a person reads, as lines. Paragraphs, divisions, headings, list items and the
other block elements of BLOCKS start and end a line of their own (no empty line between them);
`<br/>` ends a line (two leave an empty one); spaces, tabs and line ends collapse to one space
outside `<pre>`, which keeps them; a list item starts with "- " (in `<ul>`) or "N. " (in `<ol>`,
counting from its `start`), indented two spaces a level of nesting, and its further lines are
indented under it; a table gives a line per row, its cells separated by " | "; an `<object>` is
its fallback content, else its `alt`. Lines lose their trailing spaces; empty lines at either end
are dropped.
"""

import json
import os
import re
import sys
import zipfile

from lxml import etree

from reqif.models.reqif_spec_object_type import ReqIFSpecObjectType
from reqif.models.reqif_spec_relation_type import ReqIFSpecRelationType
from reqif.parser import ReqIFParser
from reqif.parsers.attribute_value_parser import AttributeValueParser

MAX_NAME_FROM_TEXT = 80

BLOCKS = {
    "address", "blockquote", "caption", "dd", "div", "dl", "dt", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "li", "ol", "p", "pre", "table", "tr", "ul",
}
COLLAPSIBLE = re.compile(r"[ \t\r\n\f]+")


class XhtmlLines:
    """The lines of an XHTML value, built by walking its element tree (XHTML TEXT above)."""

    def __init__(self):
        self.lines = []
        self.line = ""
        self.lists = []  # per open list: [ordered, next number]
        self.marker = None
        self.in_cell = 0
        self.in_pre = 0
        self.cells = 0
        self.embedded = []

    def walk(self, element):
        if not isinstance(element.tag, str):  # a comment or processing instruction
            return
        name = etree.QName(element).localname
        if name == "br":
            self.end_line(hard=True)
            return
        if name in BLOCKS:
            self.end_line(hard=False)
        if name == "pre":
            self.in_pre += 1
        elif name in ("ul", "ol"):
            start = element.get("start")
            self.lists.append([name == "ol", int(start) if start and start.strip().lstrip("-").isdigit() else 1])
        elif name == "li":
            indent = "  " * max(len(self.lists) - 1, 0)
            current = self.lists[-1] if self.lists else [False, 1]
            self.marker = indent + (f"{current[1]}. " if current[0] else "- ")
            if current[0]:
                current[1] += 1
        elif name == "tr":
            self.cells = 0
        elif name in ("td", "th"):
            if self.cells > 0:
                self.put("| " if self.line.endswith(" ") else " | ")
            self.cells += 1
            self.in_cell += 1
        if name == "object":
            self.embedded.append({"data": element.get("data"), "type": element.get("type")})
            before = self.visible_text()
            self.walk_content(element)
            if self.visible_text() == before and (element.get("alt") or "").strip():
                self.text(element.get("alt"))
        else:
            self.walk_content(element)
        if name == "pre":
            self.in_pre -= 1
        elif name in ("ul", "ol"):
            self.lists.pop()
        elif name == "li":
            self.marker = None
        elif name in ("td", "th"):
            self.in_cell -= 1
        if name in BLOCKS:
            self.end_line(hard=False)

    def walk_content(self, element):
        if element.text:
            self.text(element.text)
        for child in element:
            self.walk(child)
            if child.tail:
                self.text(child.tail)

    def visible_text(self):
        return "".join(self.lines).replace(" ", "") + self.line.replace(" ", "")

    def text(self, chunk):
        if self.in_pre > 0:
            parts = re.split(r"\r?\n", chunk)
            self.put(parts[0])
            for part in parts[1:]:
                self.end_line(hard=True)
                self.put(part)
            return
        chunk = COLLAPSIBLE.sub(" ", chunk)
        if self.line == "" or self.line.endswith(" "):
            chunk = chunk[1:] if chunk.startswith(" ") else chunk
        self.put(chunk)

    def put(self, text):
        if text == "":
            return
        if self.line == "":
            if self.marker is not None:
                self.line = self.marker
            elif self.lists and self.in_cell == 0:
                self.line = "  " * len(self.lists)
            self.marker = None
        self.line += text

    def end_line(self, hard):
        if self.in_cell > 0:
            if self.line != "" and not self.line.endswith(" "):
                self.line += " "
            return
        if not hard and self.line == "":
            return
        self.lines.append(self.line)
        self.line = ""

    def result(self):
        lines = [line.rstrip() for line in self.lines + [self.line]]
        while lines and lines[0] == "":
            lines.pop(0)
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines)


def xhtml_value(attribute_xml):
    """An ATTRIBUTE-VALUE-XHTML element's text and embedded objects."""
    the_value = attribute_xml.find("THE-VALUE")
    lines = XhtmlLines()
    if the_value is not None:
        lines.walk_content(the_value)
    return {"kind": "XHTML", "value": lines.result(), "embedded": lines.embedded}


def first_line(text):
    """NAME RULE: the first line of a text that is not blank, at most 80 characters."""
    for part in text.split("\n"):
        line = re.sub(r"\s+", " ", part).strip()
        if line == "":
            continue
        if len(line) <= MAX_NAME_FROM_TEXT:
            return line
        cut = line[: MAX_NAME_FROM_TEXT - 1]
        space = cut.rfind(" ")
        return (cut[:space] if space > MAX_NAME_FROM_TEXT / 2 else cut).rstrip() + "…"
    return None


def record_name(long_name, values):
    """NAME RULE: the record's name and where it comes from."""
    candidates = [
        ("ReqIF.Name", values.get("ReqIF.Name", {}).get("value")),
        ("LONG-NAME", long_name),
        ("ReqIF.ChapterName", values.get("ReqIF.ChapterName", {}).get("value")),
        ("ReqIF.Text", values.get("ReqIF.Text", {}).get("value")),
    ]
    for source, candidate in candidates:
        if not isinstance(candidate, str) or candidate.strip() == "":
            continue
        return (first_line(candidate) if source == "ReqIF.Text" else candidate), source
    return None, None


def read_bundle(path):
    if path.endswith(".reqifz"):
        with zipfile.ZipFile(path) as archive:
            entries = [name for name in archive.namelist() if name.endswith(".reqif")]
            if len(entries) != 1:
                raise SystemExit(f"{path}: holds {len(entries)} .reqif files, not one")
            return ReqIFParser.parse_from_string(archive.read(entries[0]).decode("utf-8"))
    return ReqIFParser.parse(path)


def expectation(path):
    bundle = read_bundle(path)
    if bundle.exceptions:
        raise SystemExit(f"{path}: {[str(exception) for exception in bundle.exceptions]}")
    content = bundle.core_content.req_if_content
    spec_types = content.spec_types or []
    object_types = [t for t in spec_types if isinstance(t, ReqIFSpecObjectType)]
    relation_types = {t.identifier: t.long_name for t in spec_types if isinstance(t, ReqIFSpecRelationType)}
    definitions = {}
    for spec_type in spec_types:
        for definition in getattr(spec_type, "attribute_definitions", None) or []:
            definitions[definition.identifier] = definition
    enum_values = {}
    for data_type in content.data_types or []:
        for enum_value in getattr(data_type, "values", None) or []:
            enum_values[enum_value.identifier] = enum_value

    def definition_name(ref):
        definition = definitions.get(ref)
        if definition is None:
            return ref
        return definition.long_name if definition.long_name is not None else definition.identifier

    def read_value(attribute):
        kind = attribute.attribute_type.name
        if kind == "XHTML":
            return xhtml_value(attribute.xml_node)
        if kind == "ENUMERATION":
            chosen = [enum_values[ref] for ref in attribute.value]
            return {
                "kind": kind,
                "value": [v.long_name if v.long_name else v.identifier for v in chosen],
                "keys": [v.other_content for v in chosen],
            }
        if kind == "INTEGER":
            return {"kind": kind, "value": int(attribute.value)}
        if kind == "REAL":
            return {"kind": kind, "value": float(attribute.value)}
        if kind == "BOOLEAN":
            return {"kind": kind, "value": attribute.value.strip() in ("true", "1")}
        return {"kind": kind, "value": attribute.value}

    def read_values(attributes):
        return {definition_name(a.definition_ref): read_value(a) for a in attributes or []}

    def defaults_of(spec_type, carried):
        defaults = {}
        for definition in spec_type.attribute_definitions or []:
            if definition.identifier in carried or definition.xml_node is None:
                continue
            default = definition.xml_node.find("DEFAULT-VALUE")
            if default is None or len(default) == 0:
                continue
            for _, value in read_values(AttributeValueParser.parse_attribute_values(default)).items():
                defaults[definition_name(definition.identifier)] = value
        return defaults

    types_by_id = {t.identifier: t for t in object_types}
    objects = []
    for spec_object in content.spec_objects or []:
        values = read_values(spec_object.attributes)
        name, name_from = record_name(spec_object.long_name, values)
        spec_type = types_by_id.get(spec_object.spec_object_type)
        carried = {a.definition_ref for a in spec_object.attributes or []}
        objects.append({
            "identifier": spec_object.identifier,
            "type": spec_type.long_name if spec_type else None,
            "name": name,
            "nameFrom": name_from,
            "values": values,
            "defaults": defaults_of(spec_type, carried) if spec_type else {},
        })
    header = bundle.req_if_header
    return {
        "file": os.path.basename(path),
        "readBy": "StrictDoc reqif 0.0.52 (vendor/strictdoc-reqif) and support/reqif-expected.py",
        "tool": {"reqIfToolId": header.req_if_tool_id, "sourceToolId": header.source_tool_id},
        "specObjectCount": len(objects),
        "specObjectTypes": [t.long_name for t in object_types],
        "objects": objects,
        "relations": [
            {"source": r.source, "target": r.target, "type": relation_types.get(r.relation_type_ref)}
            for r in content.spec_relations or []
        ],
        "specifications": [
            {
                "identifier": specification.identifier,
                "name": specification.long_name,
                "hierarchy": [
                    {"object": h.spec_object, "level": h.level}
                    for h in bundle.iterate_specification_hierarchy(specification)
                ],
            }
            for specification in content.specifications or []
        ],
    }


def main(arguments):
    out = None
    if arguments[:1] == ["--write"]:
        out, arguments = arguments[1], arguments[2:]
    for path in arguments:
        text = json.dumps(expectation(path), indent=2, ensure_ascii=False) + "\n"
        if out is None:
            sys.stdout.write(text)
        else:
            with open(os.path.join(out, os.path.basename(path) + ".json"), "w", encoding="utf-8") as file:
                file.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
