# Reads an XLSX export with zipfile and xml.etree (an XML reader
# independent of the Go writer) and prints the cells of every worksheet,
# in workbook order, as JSON rows. A later sheet's first row must repeat
# the header and is dropped. Absent cells read as "".
import json, re, sys, zipfile
import xml.etree.ElementTree as ET

M = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
P = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def col(ref):
    n = 0
    for ch in re.match(r"[A-Z]+", ref).group(0):
        n = n * 26 + ord(ch) - 64
    return n - 1


z = zipfile.ZipFile(sys.argv[1])
if z.testzip() is not None:
    sys.exit("bad zip member")
names = set(z.namelist())
for part in ["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels"]:
    if part not in names:
        sys.exit("missing part " + part)
types = ET.fromstring(z.read("[Content_Types].xml"))
overrides = {o.get("PartName") for o in types}
rels = {r.get("Id"): r.get("Target") for r in ET.fromstring(z.read("xl/_rels/workbook.xml.rels")).iter(P + "Relationship")}
wb = ET.fromstring(z.read("xl/workbook.xml"))
out, header = [], None
for sheet in wb.iter(M + "sheet"):
    target = "xl/" + rels[sheet.get(R + "id")]
    if "/" + target not in overrides:
        sys.exit("no content type for " + target)
    rows = []
    for row in ET.fromstring(z.read(target)).iter(M + "row"):
        cells = {}
        for c in row.iter(M + "c"):
            t = c.get("t", "n")
            if t == "inlineStr":
                v = "".join(x.text or "" for x in c.iter(M + "t"))
            else:
                v = c.findtext(M + "v") or ""
            cells[col(c.get("r"))] = v
        width = max(cells) + 1 if cells else 0
        rows.append([cells.get(i, "") for i in range(width)])
    if header is None:
        header = rows[0]
    elif rows[0] != header:
        sys.exit("sheet %s does not start with the header" % sheet.get("name"))
    else:
        rows = rows[1:]
    out.extend(rows)
# Pad every row to the header's width, as CSV carries empty trailing cells.
out = [r + [""] * (len(header) - len(r)) for r in out]
json.dump(out, sys.stdout)
