"""The tests' scripted OpenAI-compatible endpoint, served for real on a loopback port."""

import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "model_endpoint"))
import scripted_openai  # noqa: E402

KEY = "sk-endpoint-test-7f3a"
SCRIPT = {"tasks": [{"match": "Write the word hello", "steps": ["echo hello > /testbed/answer.txt"],
                     "files": {"answer.txt": "hello\n"}}]}
BASH_TOOL = [{"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]


@pytest.fixture
def endpoint(tmp_path):
    log = tmp_path / "answers.jsonl"
    scripted_openai.Handler.endpoint = scripted_openai.Endpoint(SCRIPT, KEY, str(log))
    server = ThreadingHTTPServer(("127.0.0.1", 0), scripted_openai.Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1], log
    server.shutdown()


def post(url, body, key=KEY):
    request = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Content-Type"), response.read().decode()


def conversation(*assistant_turns, system="You solve tasks."):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Write the word hello into a file"}]
    for turn in assistant_turns:
        messages += [{"role": "assistant", "content": turn}, {"role": "user", "content": "output"}]
    return messages


def test_a_wrong_key_is_refused(endpoint):
    url, log = endpoint
    with pytest.raises(urllib.error.HTTPError) as error:
        post(url, {"messages": conversation()}, key="wrong")
    assert error.value.code == 401 and json.load(error.value)["error"]["code"] == "invalid_api_key"
    assert not log.exists()


def test_steps_come_as_tool_calls_when_tools_are_offered(endpoint):
    url, log = endpoint
    _type, body = post(url, {"model": "m", "messages": conversation(), "tools": BASH_TOOL})
    answer = json.loads(body)
    call = answer["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "echo hello > /testbed/answer.txt"}
    assert answer["choices"][0]["finish_reason"] == "tool_calls"
    usage = answer["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert json.loads(log.read_text())["usage"] == usage


def test_steps_come_as_bash_blocks_without_tools_then_the_agents_submission_then_text(endpoint):
    url, _log = endpoint
    first = json.loads(post(url, {"messages": conversation()})[1])["choices"][0]["message"]["content"]
    assert "```bash\necho hello > /testbed/answer.txt\n```" in first
    marker = "When done, run echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    submit = json.loads(post(url, {"messages": conversation("step 1", system=marker)})[1])
    assert "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in submit["choices"][0]["message"]["content"]
    done = json.loads(post(url, {"messages": conversation("step 1", "submit", system=marker)})[1])
    assert done["choices"][0]["message"]["content"] == scripted_openai.FINISH_TEXT


def test_the_finish_tool_ends_a_conversation_that_offers_it(endpoint):
    url, _log = endpoint
    tools = BASH_TOOL + [{"type": "function", "function": {"name": "finish", "parameters": {
        "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}}]
    answer = json.loads(post(url, {"messages": conversation("step 1"), "tools": tools})[1])["choices"][0]
    call = answer["message"]["tool_calls"][0]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == ("finish", {"message": "The task is done."})
    assert answer["finish_reason"] == "tool_calls"


def test_an_agent_asking_for_file_listings_gets_the_solution_files_then_text(endpoint):
    url, log = endpoint
    system = "To suggest changes to a file you MUST return a *file listing* that contains the entire content of the file."
    first = json.loads(post(url, {"messages": conversation(system=system)})[1])["choices"][0]["message"]
    assert first == {"role": "assistant", "content": "answer.txt\n```\nhello\n```"}
    # aider's prompt carries example turns of its own: the files answer the task's message wherever it comes.
    examples = conversation("an example answer", "another", system=system) + [
        {"role": "user", "content": "Write the word hello into a file"}]
    again = json.loads(post(url, {"messages": examples})[1])["choices"][0]["message"]
    assert again["content"] == first["content"]
    done = json.loads(post(url, {"messages": conversation("answer.txt ...", system=system)})[1])["choices"][0]["message"]
    assert done["content"] == scripted_openai.FINISH_TEXT
    assert [json.loads(line)["kind"] for line in log.read_text().splitlines()] == ["files", "files", "text"]


def test_a_commit_message_request_quoting_the_task_is_no_step_of_it(endpoint):
    url, log = endpoint
    system = "You are an expert software engineer that generates concise, one-line Git commit messages based on the diffs."
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": "# Diffs:\n+Write the word hello into a file\n+hello"}]
    answer = json.loads(post(url, {"messages": messages})[1])["choices"][0]["message"]
    assert answer == {"role": "assistant", "content": scripted_openai.COMMIT_MESSAGE}
    record = json.loads(log.read_text())
    assert (record["task"], record["kind"]) == (None, "commit-message")


def test_streaming_answers_are_server_sent_events_with_usage(endpoint):
    url, log = endpoint
    content_type, body = post(url, {"messages": conversation(), "tools": BASH_TOOL, "stream": True,
                                    "stream_options": {"include_usage": True}})
    assert content_type == "text/event-stream"
    events = [line[len("data: "):] for line in body.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert chunks[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == json.loads(log.read_text())["usage"]


def test_an_unknown_task_gets_no_solution(endpoint):
    url, _log = endpoint
    messages = [{"role": "user", "content": "Prove the Riemann hypothesis"}]
    answer = json.loads(post(url, {"messages": messages, "tools": BASH_TOOL})[1])
    assert "tool_calls" not in answer["choices"][0]["message"]


def test_the_key_is_read_from_the_runtime_containers_key_file(tmp_path):
    env = tmp_path / "api_key.env"
    env.write_text("# Managed by Ansible\nOTHER='x'\nOPENAI_API_KEY='a\\\\b\\'c'\n")
    assert scripted_openai.read_env_file_key(str(env), "OPENAI_API_KEY") == "a\\b'c"
    assert scripted_openai.read_env_file_key(str(env), "MISSING") == ""


def test_first_steps_come_before_every_task_s_own(tmp_path, monkeypatch):
    script = tmp_path / "tasks.json"
    script.write_text(json.dumps(SCRIPT))
    captured = {}

    class Server:
        def __init__(self, address, handler):
            captured["script"] = handler.endpoint.script

        def serve_forever(self):
            pass

    monkeypatch.setattr(scripted_openai, "ThreadingHTTPServer", Server)
    scripted_openai.main(["--script", str(script), "--api-key-file", str(script), "--first-step", "hunt"])
    assert captured["script"]["tasks"][0]["steps"] == ["hunt", "echo hello > /testbed/answer.txt"]
