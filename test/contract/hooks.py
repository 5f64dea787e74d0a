"""Schemathesis hooks for the contract run (test/contract-schemathesis.test.ts).

Loaded with SCHEMATHESIS_HOOKS=hooks (this directory on PYTHONPATH). A JSON
Schema cannot state rules that relate two values; the spec states them in its
descriptions and the service answers 400 when they are broken. This
`before_call` hook (it runs in every phase, and Schemathesis re-validates the
case afterwards) makes generated cases respect those documented rules, so
that "schema-valid request rejected" keeps meaning what it says. It never
relaxes a check, and only touches positive cases (negative ones are sent as
generated):

- Date ranges: `endDate` is not before `startDate` (same for the load and
  offload pairs): an inverted pair is swapped.
- Reporting periods (tax summary, analytics): at most 366 days: the end is
  brought closer to the start. `targetMonth` cannot be combined with
  `startDate`/`endDate`: the range goes.
- Page depth: `page × limit` may not exceed 10,000: `page` is lowered.
- `cursor` only ever comes from a previous page's `meta.nextCursor` (it is signed
  and bound to its walk; anything else is the documented 400): a generated one is
  dropped.
- `Idempotency-Key`: a client uses a fresh key per distinct request (reusing
  one with another body is the documented 422): each call gets its own.
- `extraData` keys may not start with `$` or contain `.` (they would be read
  as MongoDB operators or paths): such keys are renamed; nesting deeper than
  5 levels is cut, and an extraData over 8 KiB of JSON is emptied.
- A webhook `url` must be a public address (no loopback, private or reserved
  ranges, no `localhost`) and a URL a WHATWG parser accepts: no pattern can
  state that, so a generated URL becomes a public one, `https://hooks.example.com/…`
  (the service never resolves it when the endpoint is created).
"""

import datetime
from collections.abc import Mapping
import json
import re
import uuid

import schemathesis

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
RANGES = (("startDate", "endDate"), ("loadStartDate", "loadEndDate"), ("offloadStartDate", "offloadEndDate"))
MAX_DEPTH = 10_000
MAX_PERIOD_DAYS = 366
EXTRA_DATA_MAX_NESTING = 5


def _date(value):
    if not isinstance(value, str) or not DATE.match(value):
        return None
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        return None


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,5}", value):
        return int(value)
    return None


def _fix_query(path, query):
    for start, end in RANGES:
        a, b = _date(query.get(start)), _date(query.get(end))
        if a and b and b < a:
            query[start], query[end] = query[end], query[start]

    query.pop("cursor", None)

    page, limit = _int(query.get("page")), _int(query.get("limit"))
    if page is not None and 1 <= page <= MAX_DEPTH:
        size = limit if limit is not None and 1 <= limit <= 100 else (20 if "limit" not in query else None)
        if size is not None and page * size > MAX_DEPTH:
            query["page"] = str(MAX_DEPTH // size) if isinstance(query["page"], str) else MAX_DEPTH // size

    if path == "/api/tax-summary" or path.startswith("/api/analytics/"):
        month = query.get("targetMonth")
        if isinstance(month, str) and MONTH.match(month):
            for name in ("startDate", "endDate"):
                if _date(query.get(name)):
                    del query[name]
        a, b = _date(query.get("startDate")), _date(query.get("endDate"))
        if a and b and (b - a).days + 1 > MAX_PERIOD_DAYS:
            query["endDate"] = (a + datetime.timedelta(days=MAX_PERIOD_DAYS - 1)).isoformat() if a.year < 9999 else query["startDate"]
        elif a and "endDate" not in query:
            # Open-ended: from startDate to today (service clock, Mexico City; a day of slack).
            today = datetime.datetime.now(datetime.timezone.utc).date()
            if (today - a).days + 2 > MAX_PERIOD_DAYS:
                query["endDate"] = (a + datetime.timedelta(days=MAX_PERIOD_DAYS - 1)).isoformat() if a.year < 9999 else query["startDate"]


def _clean_keys(value, depth=1):
    if isinstance(value, dict):
        if depth > EXTRA_DATA_MAX_NESTING:
            return {}
        out = {}
        for key, child in value.items():
            if isinstance(key, str):
                key = key.replace(".", "_").replace("\0", "_")
                if key.startswith("$"):
                    key = "_" + key[1:]
            out[key] = _clean_keys(child, depth + 1)
        return out
    if isinstance(value, list):
        return [_clean_keys(item, depth) for item in value]
    return value


@schemathesis.hook
def before_call(context, case, kwargs):
    # Negative cases are left alone: any 4xx is right for them, and an edit would make
    # Schemathesis re-validate the case (and, for a "missing header" case, send the header).
    meta = getattr(case, "meta", None)
    if meta is not None and meta.generation.mode.is_negative:
        return
    path = case.operation.path
    # Containers are replaced, not edited in place (some are views built on access).
    if isinstance(case.query, Mapping):
        query = dict(case.query)
        _fix_query(path, query)
        if query != dict(case.query):
            case.query = query
    if isinstance(case.headers, Mapping):
        headers = dict(case.headers)
        for name, value in headers.items():
            if name.lower() == "idempotency-key" and isinstance(value, str) and re.fullmatch(r"[!-~]{1,255}", value):
                headers[name] = str(uuid.uuid4())
        if headers != dict(case.headers):
            case.headers = headers
    if path == "/api/webhooks" and case.method.upper() == "POST" and isinstance(case.body, dict) and isinstance(case.body.get("url"), str):
        case.body = {**case.body, "url": f"https://hooks.example.com/contract/{uuid.uuid4().hex}"}
    if path == "/api/alerts/schedule" and isinstance(case.body, dict) and isinstance(case.body.get("extraData"), dict):
        extra = _clean_keys(case.body["extraData"])
        # At most 8 KiB of JSON (the service's documented limit).
        if len(json.dumps(extra, ensure_ascii=False).encode("utf-8", "surrogatepass")) > 8000:
            extra = {}
        if extra != case.body["extraData"]:
            case.body = {**case.body, "extraData": extra}
