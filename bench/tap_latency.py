#!/usr/bin/env python3
"""A tap in the playground, from the press to the stack drawn (issue 36), in headless Chromium.

Usage: tap_latency.py PATH/TO/flowstack [TAPS] [--rounds N] [--profile FILE]
Starts `flowstack serve` on a temporary SQLite file and a free loopback port and Chromium on its
playground, walks the sample app to home, sets the page's latency slider to 300 ms (each request
and each answer wait that long), then presses the tab bar TAPS times (210 by default, as
scripts/browser.py does) over the DevTools protocol, N rounds on the same page. Each round prints
the p50, p90, p99, max and mean of what the page measured (performance.now(), from the press's
handler to the stack in the DOM). `--profile FILE` records the last round with Chromium's
sampling profiler at 50 us into FILE (a .cpuprofile, which lifts the figures). Standard library
only; loopback only.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from harness.devtools import Chromium, Page  # noqa: E402
from harness.server import FlowStackProcess  # noqa: E402

TOP = "document.querySelector('[data-testid=phone]').dataset.topFeature"


def open_playground(browser, port):
    """The playground's tab, its sample app walked to home and its latency slider at 300 ms."""
    page = Page(browser)
    page.call("Page.navigate", {"url": f"http://127.0.0.1:{port}/"})
    page.wait(f"document.readyState === 'complete' && {TOP}", timeout=30)
    page.click("action-onboarding.showSecond")
    page.wait(f"{TOP} === 'onboarding.second'")
    page.click("action-onboarding.completed")
    page.wait(f"{TOP} === 'home.first'")
    page.js("(() => { const s = document.querySelector('[data-testid=latency-slider]');"
            " s.value = 300; s.dispatchEvent(new Event('input')); return true; })()")
    return page


def press_tabs(page, taps):
    """Presses the tab bar `taps` times, each time the tab not selected, then waits for the queue to empty."""
    selected = page.js("Array.from(document.querySelectorAll('[data-testid=tabbar] .tab'))"
                       ".findIndex((t) => t.classList.contains('selected'))")
    for index in range(taps):
        page.click(f"tab-{(selected + 1 + index) % 2}")
    page.wait("document.querySelector('[data-testid=queue-length]').dataset.count === '0'", timeout=60)


def rank(times, q):
    """The q-th percentile of the sorted list `times` (nearest rank)."""
    return times[max(0, -(-q * len(times) // 100) - 1)]


def summary(times):
    times = sorted(times)
    return (f"{len(times)} taps, p50 {rank(times, 50):.2f} ms, p90 {rank(times, 90):.2f} ms, p99 {rank(times, 99):.2f} ms, "
            f"max {times[-1]:.2f} ms, mean {sum(times) / len(times):.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("taps", type=int, nargs="?", default=210)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="flowstack-tap-latency-")
    server = FlowStackProcess(os.path.abspath(args.binary), work)
    browser = Chromium(work, viewport=(1440, 1000))
    try:
        server.start()
        browser.start()
        page = open_playground(browser, server.port)
        for round_ in range(args.rounds):
            profiling = args.profile and round_ == args.rounds - 1
            page.js("(window.FlowStackPlayground.tapTimes = [], true)")
            if profiling:
                page.call("Profiler.enable")
                page.call("Profiler.setSamplingInterval", {"interval": 50})
                page.call("Profiler.start")
            press_tabs(page, args.taps)
            if profiling:
                with open(args.profile, "w") as file:
                    json.dump(page.call("Profiler.stop")["profile"], file)
            print(f"round {round_ + 1}: {summary(page.js('window.FlowStackPlayground.tapTimes'))}", flush=True)
    finally:
        browser.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
