"""Schemathesis hooks for the contract run (test/contract-schemathesis.test.ts).

Loaded with SCHEMATHESIS_HOOKS=hooks (this directory on PYTHONPATH). They only
teach the generator the documented rules a JSON Schema cannot state, so that
"schema-valid" cases are also valid requests; they never relax a check:

- Date ranges: `endDate` must not be before `startDate` (and the same for the
  load/offload pairs): an inverted pair is swapped.
- Page depth: `page × limit` may not exceed 10,000: `page` is lowered.
- `targetMonth` cannot be combined with `startDate`/`endDate`: the range goes.
- `Idempotency-Key`: a client sends a fresh key per distinct request; reusing
  one with another body is the documented 422. Each generated case gets its
  own key (so the check "schema-valid request accepted" is meaningful).

Only values that already satisfy their own schema are touched (a negative case
stays negative: its invalid value is left as it is).
"""

import re
import uuid

import schemathesis

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
RANGES = (("startDate", "endDate"), ("loadStartDate", "loadEndDate"), ("offloadStartDate", "offloadEndDate"))
MAX_DEPTH = 10_000


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,5}", value):
        return int(value)
    return None


@schemathesis.hook
def map_query(context, query):
    if not isinstance(query, dict):
        return query
    for start, end in RANGES:
        a, b = query.get(start), query.get(end)
        if isinstance(a, str) and isinstance(b, str) and DATE.match(a) and DATE.match(b) and b < a:
            query[start], query[end] = b, a
    page, limit = _int(query.get("page")), _int(query.get("limit"))
    if page is not None and 1 <= page <= MAX_DEPTH:
        size = limit if limit is not None and 1 <= limit <= 100 else (20 if "limit" not in query else None)
        if size is not None and page * size > MAX_DEPTH:
            query["page"] = type(query["page"])(MAX_DEPTH // size) if not isinstance(query["page"], str) else str(MAX_DEPTH // size)
    month = query.get("targetMonth")
    if isinstance(month, str) and MONTH.match(month):
        for name in ("startDate", "endDate"):
            value = query.get(name)
            if isinstance(value, str) and DATE.match(value):
                del query[name]
    return query


@schemathesis.hook
def map_headers(context, headers):
    if not isinstance(headers, dict):
        return headers
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and re.fullmatch(r"[!-~]{1,255}", value):
            headers[name] = str(uuid.uuid4())
    return headers
