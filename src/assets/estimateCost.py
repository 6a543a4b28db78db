#!/usr/bin/env python3
"""estimateCost.py - the cost gridkeeper charges for a telemetry query request (POST /v1/telemetry/query).

Usage (Python 3.8+, no dependencies):
    python3 estimateCost.py [FILE] [--now MS] [--jsonl]
Reads the request body (one query or an array of queries) as JSON from FILE or stdin and prints
    {"cost": N, "estimatedDatapoints": N, "scannedShards": N}
--now MS   compute as if the current time were MS (unix ms), for reproducible results
--jsonl    the input holds one body per line; prints one result per line

Rules (gridkeeper docs/api.md#cost): a query reads [from, to) from where.time (>= v: from = v; > v: from = v + 1;
< v: to = v; <= v: to = v + 1; = v: both); conditions intersect; `to` defaults to now; no lower bound means the
namespace's worst-case range ending at `to`. Datapoints = min(limit, ceil(range / interval)); shards = epoch-aligned
shard windows the range overlaps. cost = ceil((100 + 50*queries + datapoints + 200*shards) / 100), in integers.
"""
import json
import re
import sys
import time

DAY = 86_400_000
# (name suffix, interval ms, shard duration ms, worst-case range ms); the name is the retention policy / bucket / IOx value.
PROFILES = [
    ("_one_s", 1_000, DAY, 30 * DAY),
    ("_one_m", 60_000, 7 * DAY, 400 * DAY),
    ("_one_h", 3_600_000, 90 * DAY, 3650 * DAY),
]
DEFAULT_PROFILE = ("", 10_000, DAY, 30 * DAY)

MIN_MS = -62_167_219_200_000  # 0000-01-01T00:00:00.000Z
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
                 r"(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?")


def days_from_civil(y, m, d):
    if m <= 2:
        y -= 1
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def time_ms(value):
    """Unix ms from a number or an ISO 8601 string (no offset means UTC; digits after the milliseconds are dropped)."""
    ms = None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        ms = int(value)
    m = ISO.fullmatch(value) if isinstance(value, str) else None
    if m:
        y, mo, d = int(m[1]), int(m[2]), int(m[3])
        h, mi, s = int(m[4] or 0), int(m[5] or 0), int(m[6] or 0)
        frac = int((m[7] or "")[:3].ljust(3, "0"))
        leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
        month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] if 1 <= mo <= 12 else 0
        zone = m[8] or "Z"
        oh, om = (0, 0) if zone == "Z" else (int(zone[1:3]), int(zone[4:6]))
        offset = (-1 if zone[0] == "-" else 1) * (oh * 60 + om)
        if 1 <= d <= month_days and h <= 23 and mi <= 59 and s <= 59 and oh <= 23 and om <= 59:
            ms = (((days_from_civil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60 + s) * 1000 + frac
    if ms is None or ms < MIN_MS or ms > MAX_MS:
        raise ValueError("invalid time value: " + json.dumps(value))
    return ms


def estimate_query(query, now):
    ns = query["from"].get("namespace", query["from"])  # the legacy form carries database/retentionPolicy directly
    version = ns.get("version", "1")
    name = ns["bucket"] if version == "2" else ns["value"] if version == "IOx" else ns["retentionPolicy"]
    _, interval, shard, worst_case = next((p for p in PROFILES if name.endswith(p[0])), DEFAULT_PROFILE)
    lo, hi = None, None
    for cond in (query.get("where") or {}).get("time") or []:
        op, v = cond["operator"], time_ms(cond["value"])
        if op in (">=", "="):
            lo = v if lo is None else max(lo, v)
        if op == ">":
            lo = v + 1 if lo is None else max(lo, v + 1)
        if op == "<":
            hi = v if hi is None else min(hi, v)
        if op in ("<=", "="):
            hi = v + 1 if hi is None else min(hi, v + 1)
    if hi is None:
        hi = now
    if lo is None:
        lo = hi - worst_case
    if lo >= hi:
        return 0, 0
    points = -(-(hi - lo) // interval)  # ceil division
    if query.get("limit") is not None:
        points = min(points, int(query["limit"]))
    return points, (hi - 1) // shard - lo // shard + 1


def estimate_request(body, now):
    queries = body if isinstance(body, list) else [body]
    points = shards = 0
    for query in queries:
        p, s = estimate_query(query, now)
        points += p
        shards += s
    hundredths = 100 + 50 * len(queries) + points + 200 * shards
    return {"cost": -(-hundredths // 100), "estimatedDatapoints": points, "scannedShards": shards}


def main(argv):
    file, now, jsonl = None, int(time.time() * 1000), False
    args = iter(argv)
    for arg in args:
        if arg == "--now":
            now = int(next(args))
        elif arg == "--jsonl":
            jsonl = True
        else:
            file = arg
    if file is None:
        text = sys.stdin.read()
    else:
        with open(file, encoding="utf-8") as f:
            text = f.read()
    bodies = [line for line in text.split("\n") if line.strip()] if jsonl else [text]
    for body in bodies:
        print(json.dumps(estimate_request(json.loads(body), now)))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (ValueError, KeyError, TypeError, StopIteration, OSError) as err:
        sys.stderr.write("estimateCost: %s\n" % err)
        sys.exit(2)
