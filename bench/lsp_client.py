"""A minimal language-server client over a child's stdio, for bench/server.py
and for trying `npu-mem server` by hand: frames JSON-RPC messages, answers
nothing the server asks, and waits for the messages it is told to.
Standard library only."""

import json
import os
import subprocess
import threading
import queue
import time


class Client:
    def __init__(self, command, cwd=None):
        self.proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.inbox = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = out.read(length)
            self.inbox.put((time.perf_counter(), json.loads(body)))

    def send_raw(self, body: bytes):
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message):
        message = dict(message, jsonrpc="2.0")
        self.send_raw(json.dumps(message).encode())

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, match, timeout=30.0):
        """The first message for which match(message) is true, with the time
        it arrived; other messages are dropped."""
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no matching message")
            item = self.inbox.get(timeout=left)
            if item is None:
                raise EOFError("the server closed its output")
            if match(item[1]):
                return item

    def call(self, method, params, timeout=30.0):
        id = self.request(method, params)
        return self.wait(lambda m: m.get("id") == id and "method" not in m, timeout)[1]

    def diagnostics(self, uri, version=None, timeout=30.0):
        """The next diagnostics published for uri (at version, if given), and when they arrived."""

        def match(m):
            p = m.get("params") or {}
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and p.get("uri") == uri
                and (version is None or p.get("version") == version)
            )

        at, m = self.wait(match, timeout)
        return at, m["params"]["diagnostics"]

    def initialize(self, root, options=None, encodings=None):
        caps = {"workspace": {"workspaceEdit": {"documentChanges": True}}}
        if encodings:
            caps["general"] = {"positionEncodings": encodings}
        params = {
            "processId": os.getpid(),
            "rootUri": uri_of(root),
            "capabilities": caps,
            "initializationOptions": options,
        }
        result = self.call("initialize", params)
        self.notify("initialized", {})
        return result

    def shutdown(self):
        self.call("shutdown", None)
        self.notify("exit", None)
        return self.proc.wait(timeout=10)


def uri_of(path):
    return "file://" + os.path.abspath(path)
