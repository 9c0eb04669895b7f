#!/usr/bin/env python3
"""Purpose: the report page in a real browser. Writes `mgpu_analyze report FILE --out DIR`, checks that report.html
is one self-contained file (every image a data: URI, nothing fetched from a network), opens it in headless Chromium,
and fails when an image did not decode, a table is empty or a script failed (the page's own check, read back with
--dump-dom); then the same check must catch a page broken on purpose. Leaves a screenshot, report_page.png, in DIR.
With --console LOG (mgpu_bench's output for FILE), the page's answer must be its verdict word for word: one sentence
per pair, each equal to a sentence line of the verdict, and the same break-evens. Exits 77 (CTest's skip) when no
Chromium is installed (after the checks that need no browser)."""
import html as html_text
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def chromium_command():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return [path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
    return None


def browse(browser, page, *arguments):
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(browser + [f"--user-data-dir={profile}", *arguments, page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120)
    return done.stdout


def body_attributes(dom):
    body = re.search(r"<body([^>]*)>", dom)
    if not body:
        raise SystemExit(f"no <body> in the DOM Chromium dumped:\n{dom[:500]}")
    attributes = dict(re.findall(r'([a-z-]+)="([^"]*)"', body.group(1)))
    root = re.search(r"<html([^>]*)>", dom)
    attributes["script-error"] = bool(root) and "data-script-error" in root.group(1)
    return attributes


def check_answer_against_console(html, console):
    """The page's Answer holds the verdict's sentences and break-evens, each once, and nothing else."""
    verdict = console[console.index("# verdict ("):]
    sentences = [line[len("#     "):] for line in verdict.splitlines() if line.startswith("#     ")]
    break_evens = [line[len("#   break-even, "):] for line in verdict.splitlines()
                   if line.startswith("#   break-even, ")]
    shown = [html_text.unescape(s) for s in re.findall(r'<b class="sentence">(.*?)</b>', html)]
    if not sentences or shown != sentences:
        raise SystemExit(f"the page's answer is not the verdict's:\npage: {shown}\nverdict: {sentences}")
    answer = html[html.index('id="answer"'):html.index('id="plots"')]
    for line in break_evens:
        curve, sentence = line.split(": ", 1)
        if f"<b>{html_text.escape(curve, quote=True)}</b>: {html_text.escape(sentence, quote=True)}" not in answer:
            raise SystemExit(f"the page's break-even differs from the verdict's: {line}")
    print(f"report.html's answer: {len(shown)} sentences and {len(break_evens)} break-evens, the verdict's word for "
          "word")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--analyze", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--console", help="mgpu_bench's console output for the one FILE")
    parser.add_argument("--max-bytes", type=int, default=300_000, help="the largest report.html accepted")
    parser.add_argument("files", nargs="+")
    options = parser.parse_args()
    out = pathlib.Path(options.out)
    shutil.rmtree(out, ignore_errors=True)
    report = subprocess.run([options.analyze, "report", *options.files, "--out", str(out)], capture_output=True,
                            text=True)
    if report.returncode != 0:
        raise SystemExit(f"mgpu_analyze report exited {report.returncode}: {report.stderr}")
    page = out / "report.html"
    html = page.read_text(encoding="utf-8")
    sources = re.findall(r'\b(?:src|href)="([^"]*)"', html)
    external = [s for s in sources if not s.startswith("data:") and not s.startswith("#")]
    if external or "<link" in html:
        raise SystemExit(f"report.html is not self-contained: it refers to {external or '<link>'}")
    images = html.count("<img ")
    if images < 2:
        raise SystemExit(f"report.html shows {images} plots; expected the phase, speedup and throughput plots")

    if len(html.encode("utf-8")) > options.max_bytes:
        raise SystemExit(f"report.html is {len(html.encode('utf-8'))} bytes, over {options.max_bytes}")
    if options.console:
        check_answer_against_console(html, pathlib.Path(options.console).read_text(encoding="utf-8"))

    browser = chromium_command()
    if browser is None:
        print("no chromium on PATH: the page was written but not opened")
        return SKIP
    budget = "--virtual-time-budget=10000"
    checked = body_attributes(browse(browser, page, budget, "--dump-dom"))
    print(f"report.html in Chromium: images decoded {checked.get('data-images')}, tables with rows "
          f"{checked.get('data-tables')}, check {checked.get('data-check')}")
    tables = html.count("<table")
    if checked.get("data-check") != "ok" or checked["script-error"] or \
            checked.get("data-images") != f"{images}/{images}" or checked.get("data-tables") != f"{tables}/{tables}":
        raise SystemExit(f"report.html failed in the browser (expected {images}/{images} images decoded and "
                         f"{tables}/{tables} tables with rows): {checked}")
    browse(browser, page, "--window-size=1280,2000", f"--screenshot={(out / 'report_page.png').resolve()}")
    if not (out / "report_page.png").exists() or (out / "report_page.png").stat().st_size < 10000:
        raise SystemExit("Chromium wrote no screenshot of report.html")

    # The check itself must catch a broken image, an empty table and a failing script.
    broken = out / "broken.html"
    broken.write_text(html.replace("</body>", '<img src="data:image/png;base64,AAAA"><table><tbody></tbody></table>'
                                              '<script>undefined_function();</script></body>'), encoding="utf-8")
    caught = body_attributes(browse(browser, broken, budget, "--dump-dom"))
    if caught.get("data-check") != "failed" or caught.get("data-images") != f"{images}/{images + 1}" \
            or caught.get("data-tables") != f"{tables}/{tables + 1}" or not caught["script-error"]:
        raise SystemExit(f"the page's check did not catch a broken image, an empty table and a script error: {caught}")
    broken.unlink()
    print(f"screenshot: {out / 'report_page.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
