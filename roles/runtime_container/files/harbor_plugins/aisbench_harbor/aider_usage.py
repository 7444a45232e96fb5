"""aider's token counts from its own analytics log (standard library only, no Harbor import).

With ``--analytics-log FILE`` (AIDER_ANALYTICS_LOG) aider appends every analytics event to FILE, also while its
analytics are off (AIDER_ANALYTICS=false: nothing is sent anywhere). After each message to the model it records a
``message_send`` event whose ``prompt_tokens`` and ``completion_tokens`` are the usage the model endpoint returned
for the requests of that message (aider's own estimate when the response had none, as with streaming) and ``cost``
its price (0 when aider knows no price for the model). Requests aider makes outside its coder's messages (the weak
model's commit messages and chat summaries) have no event, so they are not in these counts.
"""

import json

ANALYTICS_LOG_NAME = "aider-analytics.jsonl"


def analytics_usage(path):
    """(input tokens, output tokens, cost in USD or None) summed over the log's message_send events; None when the log
    is missing or has no such event."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    prompt = completion = 0
    cost = 0.0
    seen = False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("event") != "message_send":
            continue
        properties = event.get("properties") or {}
        seen = True
        prompt += _number(properties.get("prompt_tokens"))
        completion += _number(properties.get("completion_tokens"))
        cost += float(_number(properties.get("cost")))
    if not seen:
        return None
    return int(prompt), int(completion), (round(cost, 6) if cost else None)


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value
