# Reads a CSV export with Python's csv module in strict mode and prints
# its records as JSON: an RFC 4180 reader independent of the Go writer.
import csv, io, json, sys

with open(sys.argv[1], "rb") as f:
    raw = f.read()
if raw.startswith(b"\xef\xbb\xbf"):
    sys.exit("byte order mark present")
text = raw.decode("utf-8", errors="strict")
rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
json.dump(rows, sys.stdout)
