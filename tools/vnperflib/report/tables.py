"""Plain text tables."""


def fmt_num(v, digits=3):
    """Numbers for humans: 1234567 -> 1.235M; None -> "-"."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        a = abs(v)
        for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if a >= div:
                return "%.*f%s" % (digits, v / div, suf)
        return "%.*f" % (digits if a < 100 else 1, v)
    return str(v)


def fmt_count(v):
    """A count of frames or bytes as the whole number it is (5000, not
    5.000k, whatever type it was summed in); None -> "-"."""
    return fmt_num(None if v is None else int(v))


def table(headers, rows, align=None):
    """Rows of cells (any type, shown with str()) under headers; numbers are
    right-aligned unless align gives "<" or ">" per column."""
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in r] for r in rows]
    n = len(headers)
    widths = [max(len(r[i]) for r in cells) for i in range(n)]
    if align is None:
        align = ["<"] + [">"] * (n - 1)
    out = []
    for k, r in enumerate(cells):
        out.append("  ".join("%*s" % (w if a == ">" else -w, c)
                             for c, w, a in zip(r, widths, align)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def kv_table(pairs):
    """Two columns: name, value."""
    return table(["", ""], [(k, v) for k, v in pairs], align=["<", "<"]).split("\n", 2)[2]
