"""Records what tlparse says about each trace log under a folder, beside the log.

    python tlparse_answer.py [--tlparse BIN] FOLDER

For every `*.log` under FOLDER/…/tlparse/, runs `tlparse LOG -o TMP --no-browser --overwrite`
and writes `tlparse.json` into the case folder (the parent of `torch_compile_debug/`): the
tlparse version, its `Stats` line, and from its HTML pages, read as a user would read them:

  compile_ids   every compile directory (`[0/0]`, `[0/0_1]`), in tlparse's order;
  artifacts     the output files of each id, the `_N` counter removed (`dynamo_output_graph`);
  status        each compile's class in the stack tree (ok, break, error, empty, missing);
  restarts      each compile's restart reasons, from its compilation_metrics page (the same
                rows as failures_and_restarts.html's RestartAnalysis ones, counted in
                `restart_rows`, where a `<class '…'>` in a reason is swallowed as a tag);
  failures      failures_and_restarts.html's other rows: id, exception type, reason, source;
  metrics       each compilation_metrics page: the compile times (s), cache sizes, guard and
                graph counts, as printed;
  recompile_reasons  the payload of each `recompile_reasons` artifact;
  md5_failures  `fail_payload_md5` from the Stats line (0 when absent).

fxray's test `torch_versions::` reads these files and checks `fxray compiles --json` against
each item.
"""

import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def text_of(page):
    page = re.sub(r"<(style|script)>.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def number(s):
    s = s.strip()
    if s in ("", "None", "null"):
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


METRIC_LINES = {
    "entire_frame_compile_time_s": r"Entire Frame \[\?\]: (.*)",
    "backend_compile_time_s": r"Backend \[\?\]: (.*)",
    "inductor_compile_time_s": r"Inductor \[\?\]: (.*)",
    "code_gen_time_s": r"Code Gen Time: (.*)",
    "dynamo_time_before_restart_s": r"Dynamo Time Before Restart \[\?\]: (.*)",
    "cache_size": r"Cache Size: (.*)",
    "accumulated_cache_size": r"Accumulated Cache Size: (.*)",
    "guard_count": r"Guard Count: (.*)",
    "shape_env_guard_count": r"Shape Env Guards: (.*)",
    "graph_op_count": r"Graph Ops: (.*)",
    "graph_node_count": r"Graph Nodes: (.*)",
    "graph_input_count": r"Graph Inputs: (.*)",
}


def metrics_page(path):
    page = open(path).read()
    t = text_of(page)
    out = {}
    # The restart reasons as the metrics page lists them (escaped there, unlike on
    # failures_and_restarts.html, where `<class '…'>` inside a reason reads as a tag).
    m = re.search(r"Restart Reasons:(.*?)</ul>|Restart Reasons:(.*?)<h2>", page, flags=re.S)
    if m:
        items = re.findall(r"<li>\s*<code>(.*?)</code>\s*</li>", m.group(0), flags=re.S)
        out["restart_reasons"] = [html.unescape(i.strip()) for i in items]
    for key, pat in METRIC_LINES.items():
        m = re.search(pat, t)
        if m:
            out[key] = number(m.group(1))
    m = re.search(r"Compilation Info for (\[[^\]]*\])", t)
    return (m.group(1) if m else None), out


def failures_page(path):
    page = open(path).read()
    restarts, failures = [], []
    for row in re.findall(r"<tr>\s*<td>(.*?)</tr>", page, flags=re.S):
        cells = [text_of(c).strip() for c in re.findall(r"<td>(.*?)</td>", "<td>" + row, re.S)]
        if len(cells) < 3:
            continue
        cid = re.search(r"\[[^\]]*\]", cells[0])
        cid = cid.group(0) if cid else cells[0]
        if cells[1] == "RestartAnalysis":
            restarts.append({"id": cid, "reason": cells[2]})
        else:
            failures.append(
                {"id": cid, "type": cells[1], "reason": cells[2], "source": cells[3] if len(cells) > 3 else None}
            )
    return restarts, failures


def statuses(index_html):
    out = {}
    for cls, cid in re.findall(r"<a href='#[^']*' class='status-(\w+)'>(\[[^\]]*\])</a>", index_html):
        out[cid] = cls
    return out


def answer(tlparse, log):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        p = subprocess.run(
            [tlparse, log, "-o", out, "--no-browser", "--overwrite"],
            capture_output=True,
            text=True,
        )
        stats = re.search(r"Stats \{([^}]*)\}", p.stderr)
        stats = dict(
            (k.strip(), int(v)) for k, v in (kv.split(":") for kv in stats.group(1).split(",") if ":" in kv)
        ) if stats else {}
        res = {"exit": p.returncode, "stats": stats, "md5_failures": stats.get("fail_payload_md5", 0)}
        if p.returncode != 0:
            res["stderr"] = p.stderr[-2000:]
            return res
        directory = json.load(open(os.path.join(out, "compile_directory.json")))
        ids = [k for k in directory if k != "[-/-]" and k != "(unknown)"]
        res["compile_ids"] = ids
        res["artifacts"] = {
            k: [re.sub(r"_\d+(\.\w+)$", "", a["name"]) for a in v.get("artifacts", [])]
            for k, v in directory.items()
        }
        res["status"] = statuses(open(os.path.join(out, "index.html")).read())
        rows, res["failures"] = failures_page(os.path.join(out, "failures_and_restarts.html"))
        res["restart_rows"] = len(rows)
        res["metrics"] = {}
        res["restarts"] = []
        for page in sorted(glob.glob(os.path.join(out, "*", "compilation_metrics_*.html"))):
            cid, m = metrics_page(page)
            for r in m.pop("restart_reasons", []):
                res["restarts"].append({"id": cid, "reason": r})
            res["metrics"][cid] = m
        res["recompile_reasons"] = {}
        for k, v in directory.items():
            for a in v.get("artifacts", []):
                if a["name"].startswith("recompile_reasons"):
                    res["recompile_reasons"][k] = open(os.path.join(out, a["url"])).read()
        return res


def main():
    args = sys.argv[1:]
    tlparse = shutil.which("tlparse") or os.path.join(os.path.dirname(sys.executable), "tlparse")
    if args[:1] == ["--tlparse"]:
        tlparse, args = args[1], args[2:]
    version = subprocess.run([tlparse, "--version"], capture_output=True, text=True).stdout.strip()
    for log in sorted(glob.glob(os.path.join(args[0], "**", "tlparse", "*.log"), recursive=True)):
        case = os.path.dirname(os.path.dirname(os.path.dirname(log)))
        res = {"tlparse": version, "log": os.path.relpath(log, case)}
        res.update(answer(tlparse, log))
        with open(os.path.join(case, "tlparse.json"), "w") as f:
            json.dump(res, f, indent=1)
        print(os.path.relpath(log, args[0]), len(res.get("compile_ids", [])), "compile ids")


if __name__ == "__main__":
    main()
