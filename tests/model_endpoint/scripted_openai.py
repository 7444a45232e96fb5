"""Scripted OpenAI-compatible model endpoint: the one stand-in the tests use, for the language model.

It serves POST /v1/chat/completions (plain JSON or server-sent events) and answers every request with the next
step of the known solution of the task the conversation is about:

- the task is found by a substring of the conversation (``match`` in the script file);
- step k is the number of assistant turns already in the conversation;
- a step is a shell command: a tool call when the request offers a shell tool, a fenced bash block otherwise;
- after the last command the endpoint finishes: with the agent's own submission command when its prompt names one
  (mini-swe-agent's ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``), with a call of the ``finish`` tool when the request
  offers one (OpenHands), then with plain text;
- an agent that edits files instead of running commands (aider: its system prompt asks for a ``*file listing*`` and
  Harbor's ``aider --yes`` declines shell commands) gets the task's ``files`` (its solution as file contents, paths
  relative to the task's working directory) in that format as the answer to the task's message, then plain text.

Every request must carry ``Authorization: Bearer <key>`` (401 otherwise). Every answer carries ``usage`` token counts
(deterministic: characters / 4), and one JSON line per answer goes to the log file, so a test can sum what the
endpoint returned and compare it with what Harbor recorded.

Standard library only. Usage:
    scripted_openai.py --script tasks.json (--api-key-file KEY | --api-key-env-file api_key.env --api-key-name NAME)
                       [--port 8000] [--log answers.jsonl] [--first-step COMMAND ...]
--first-step puts commands before every task's own steps (the agents scenario's canary hunt: a model that tries to
find the provider key from inside the trial).
--api-key-env-file reads the key from the runtime container's 0600 key file (dotenv, single-quoted values), so the test
key lives in that file only.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOL_NAMES = ("bash", "run_shell_command", "execute_bash", "shell", "run_command", "terminal")
SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",)
FINISH_TEXT = "The task is done."
FINISH_TOOL = "finish"
# What aider's whole-file edit format asks the model for (aider/coders/wholefile_prompts.py).
FILE_LISTING_MARKER = "*file listing*"
# aider's commit-message request (aider/prompts.py, its weak model): its diff quotes the task, but it is no step of it.
COMMIT_MESSAGE_MARKER = "Git commit messages"
COMMIT_MESSAGE = "Solve the task"


def message_text(message):
    """The text of one chat message, whatever shape its content has."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def count_tokens(text):
    return max(1, len(text) // 4)


def find_task(script, messages):
    conversation = "\n".join(message_text(message) for message in messages)
    for task in script["tasks"]:
        if task["match"] in conversation:
            return task
    return None


def shell_tool(tools):
    """(tool name, argument name) of the shell tool a request offers, or None."""
    for tool in tools or []:
        function = tool.get("function") or {}
        properties = (function.get("parameters") or {}).get("properties") or {}
        if function.get("name") in SHELL_TOOL_NAMES or "command" in properties:
            return function.get("name"), "command" if "command" in properties else next(iter(properties), "command")
    return None


def asks_for_file_listings(messages, tools):
    return not tools and any(FILE_LISTING_MARKER in message_text(message) for message in messages
                             if message.get("role") == "system")


def asks_for_commit_message(messages):
    return any(COMMIT_MESSAGE_MARKER in message_text(message) for message in messages if message.get("role") == "system")


def file_listings(files):
    return "\n\n".join("%s\n```\n%s```" % (path, content) for path, content in sorted(files.items()))


def next_step(task, messages, tools=None):
    """('command', text), ('finish', text), ('text', text) or ('files', text): what the model says next."""
    if task is None:
        return "text", "I do not know this task."
    done = sum(1 for message in messages if message.get("role") == "assistant")
    if asks_for_file_listings(messages, tools) and task.get("files"):
        # aider's prompt holds example conversations (assistant turns of its own): answer the task's message itself.
        last = next((message for message in reversed(messages) if message.get("role") == "user"), {})
        return ("files", file_listings(task["files"])) if task["match"] in message_text(last) else ("text", FINISH_TEXT)
    steps = task["steps"]
    if done < len(steps):
        return "command", steps[done]
    # The agent's instructions (system prompt and task message) name its submission command, if it has one.
    prompt = "\n".join(message_text(message) for message in messages if message.get("role") in ("system", "user"))
    marker = next((marker for marker in SUBMIT_MARKERS if marker in prompt), None)
    if marker and done == len(steps):
        return "command", "echo " + marker
    if any((tool.get("function") or {}).get("name") == FINISH_TOOL for tool in tools or []):
        return "finish", FINISH_TEXT
    return "text", FINISH_TEXT


def completion_message(kind, text, tools, step_number):
    """The assistant message (content and tool calls) for one step."""
    tool = shell_tool(tools) if kind == "command" else (FINISH_TOOL, "message") if kind == "finish" else None
    if tool:
        name, argument = tool
        call = {"id": "call_%s" % uuid.uuid4().hex[:12], "type": "function",
                "function": {"name": name, "arguments": json.dumps({argument: text})}}
        return {"role": "assistant", "content": "Step %d: %s." % (step_number, "run a command" if kind == "command" else "done"),
                "tool_calls": [call]}
    if kind == "command":
        return {"role": "assistant", "content": "THOUGHT: step %d.\n\n```bash\n%s\n```" % (step_number, text)}
    return {"role": "assistant", "content": text}


class Endpoint:
    def __init__(self, script, api_key, log_path):
        self.script = script
        self.api_key = api_key
        self.log_path = log_path
        self.lock = threading.Lock()

    def answer(self, request):
        messages = request.get("messages") or []
        if asks_for_commit_message(messages):
            task, kind, text = None, "commit-message", COMMIT_MESSAGE
        else:
            task = find_task(self.script, messages)
            kind, text = next_step(task, messages, request.get("tools"))
        step_number = 1 + sum(1 for message in messages if message.get("role") == "assistant")
        message = completion_message(kind, text, request.get("tools"), step_number)
        prompt_tokens = count_tokens(json.dumps(messages, sort_keys=True) + json.dumps(request.get("tools") or []))
        completion_tokens = count_tokens(json.dumps(message, sort_keys=True))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        self.log({"time": time.time(), "model": request.get("model"), "task": task["match"] if task else None,
                  "step": step_number, "kind": kind, "text": text, "tool_call": bool(message.get("tool_calls")),
                  "stream": bool(request.get("stream")), "usage": usage})
        return message, usage

    def log(self, record):
        if not self.log_path:
            return
        with self.lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")


class Handler(BaseHTTPRequestHandler):
    endpoint = None  # set by serve()
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # one line per request on stderr, without the headers
        sys.stderr.write("scripted-openai: %s %s\n" % (self.address_string(), fmt % args))

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if self.headers.get("Authorization", "") == "Bearer " + self.endpoint.api_key:
            return True
        self.send_json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                       "param": None, "code": "invalid_api_key"}})
        return False

    def do_GET(self):
        if self.path.rstrip("/") == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            if self.authorized():
                self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "aisbench"}]})
        else:
            self.send_json(404, {"error": {"message": "no route %s" % self.path, "type": "invalid_request_error"}})

    def do_POST(self):
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self.send_json(404, {"error": {"message": "no route %s" % self.path, "type": "invalid_request_error"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not self.authorized():
            return
        try:
            request = json.loads(body)
        except ValueError as exc:
            self.send_json(400, {"error": {"message": "invalid JSON: %s" % exc, "type": "invalid_request_error"}})
            return
        message, usage = self.endpoint.answer(request)
        model = request.get("model") or "scripted"
        completion_id = "chatcmpl-%s" % uuid.uuid4().hex[:16]
        finish_reason = "tool_calls" if message.get("tool_calls") else "stop"
        if request.get("stream"):
            self.stream(completion_id, model, message, finish_reason, usage, request.get("stream_options") or {})
            return
        self.send_json(200, {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                             "usage": usage})

    def stream(self, completion_id, model, message, finish_reason, usage, stream_options):
        def chunk(choices, **extra):
            body = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                    "choices": choices}
            body.update(extra)
            return ("data: %s\n\n" % json.dumps(body)).encode()

        delta = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [dict(call, index=index) for index, call in enumerate(message["tool_calls"])]
        events = [chunk([{"index": 0, "delta": delta, "finish_reason": None}]),
                  chunk([{"index": 0, "delta": {}, "finish_reason": finish_reason}],
                        **({} if stream_options.get("include_usage") else {"usage": usage}))]
        if stream_options.get("include_usage"):
            events.append(chunk([], usage=usage))
        events.append(b"data: [DONE]\n\n")
        data = b"".join(events)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def read_env_file_key(path, name):
    """NAME's value from a dotenv file with single-quoted values (backslash escapes \\ and \\')."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep and key.strip() == name:
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] == "'":
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                return value
    return ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--script", required=True, help="JSON file: {\"tasks\": [{\"match\": str, \"steps\": [str]}]}")
    keys = parser.add_mutually_exclusive_group(required=True)
    keys.add_argument("--api-key-file", help="file holding the Bearer key requests must carry")
    keys.add_argument("--api-key-env-file", help="dotenv file holding the key (with --api-key-name)")
    parser.add_argument("--api-key-name", default="OPENAI_API_KEY")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log", default="", help="JSON lines, one per answer")
    parser.add_argument("--first-step", action="append", default=[], help="command run before every task's steps")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as handle:
        script = json.load(handle)
    for task in script["tasks"]:
        task["steps"] = args.first_step + task["steps"]
    if args.api_key_file:
        with open(args.api_key_file, encoding="utf-8") as handle:
            api_key = handle.read().strip()
    else:
        api_key = read_env_file_key(args.api_key_env_file, args.api_key_name)
    if not api_key:
        parser.error("no API key in %s" % (args.api_key_file or "%s (%s)" % (args.api_key_env_file, args.api_key_name)))
    Handler.endpoint = Endpoint(script, api_key, args.log)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    sys.stderr.write("scripted-openai: listening on %s:%d, %d scripted tasks\n" % (args.host, args.port, len(script["tasks"])))
    server.serve_forever()


if __name__ == "__main__":
    os.umask(0o022)
    main()
