"""End-to-end: pytest-lsp (a real LSP client, from PyPI) drives `npu-mem server`
on a copy of the demo project: initialize, open a file, receive the diagnostics
the CLI reports for it (same codes and ranges), edit it, receive updated
diagnostics, ask for code actions, apply the safe fixes and compare with
`--fix`'s output, hover, shut down. tests/editors.rs runs it with the
`npu-mem` under test in NPU_MEM and the demo in NPU_MEM_DEMO."""

import asyncio
import json
import os
import pathlib
import shutil
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

NPU_MEM = os.environ["NPU_MEM"]
DEMO = pathlib.Path(os.environ["NPU_MEM_DEMO"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Two copies of the demo: one the server's workspace, one for the CLI."""
    root = tmp_path_factory.mktemp("lsp")
    shutil.copytree(DEMO, root / "server")
    shutil.copytree(DEMO, root / "cli")
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[NPU_MEM, "server"]))
async def client(lsp_client: LanguageClient, workspace):
    lsp_client.registrations = []

    # VS Code's capabilities offer the dynamic registration of file watchers, which the server asks for.
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=(workspace / "server").as_uri(),
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def cli_json(cwd, *args):
    out = subprocess.run(
        [NPU_MEM, "scan", "--no-cache", "--format", "json", "--fail-on", "never", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def utf16_position(text, line, column):
    """The LSP position of the CLI's 1-based line and character column."""
    line_text = text.split("\n")[line - 1]
    units = sum(2 if ord(c) > 0xFFFF else 1 for c in line_text[: column - 1])
    return (line - 1, units)


def key(d):
    return (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)


def apply(text, edits):
    """`text` with LSP text edits (UTF-16 positions) applied, last first."""
    lines = text.splitlines(keepends=True)

    def offset(p):
        start = sum(len(l) for l in lines[: p.line])
        line = lines[p.line] if p.line < len(lines) else ""
        units = 0
        for i, c in enumerate(line.rstrip("\r\n")):
            if units >= p.character:
                return start + i
            units += 2 if ord(c) > 0xFFFF else 1
        return start + len(line.rstrip("\r\n"))

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        s, t = offset(e.range.start), offset(e.range.end)
        text = text[:s] + e.new_text + text[t:]
    return text


def edits_of(action, uri):
    edit = action.edit
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return edit.changes[uri]


async def open_file(client, path, version=1):
    uri = path.as_uri()
    text = path.read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri, text


async def diagnostics_for(client, uri, previous=None):
    """The diagnostics the server published for `uri` once they are not
    `previous` (the server publishes a document's diagnostics when they change)."""
    for _ in range(200):
        got = client.diagnostics.get(uri)
        if got is not None and got is not previous:
            return got
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), timeout=60)
    raise AssertionError(f"no new diagnostics for {uri}")


@pytest.mark.asyncio
async def test_the_server_reports_fixes_and_explains_as_the_cli_does(client: LanguageClient, workspace):
    path = workspace / "server" / "train.py"
    uri, text = await open_file(client, path)

    # The diagnostics are the CLI's findings for the file, at the same places.
    report = cli_json(workspace / "cli", ".")
    want = sorted(
        (f["code"], *utf16_position(text, f["line"], f["column"]), *utf16_position(text, f["end_line"], f["end_column"]))
        for f in report["findings"]
        if f["path"] == "train.py"
    )
    got = await diagnostics_for(client, uri)
    assert sorted(key(d) for d in got) == want
    assert len(want) > 5
    assert all(d.source == "npu-mem" and d.code_description is not None for d in got)

    # An edit: a line added at the top moves every diagnostic down by one.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    text="# edited\n",
                )
            ],
        )
    )
    moved = await diagnostics_for(client, uri, previous=got)
    assert sorted(d.range.start.line for d in moved) == sorted(d.range.start.line + 1 for d in got)
    text = "# edited\n" + text

    # Code actions on a finding with a safe fix: its fix, preferred, and an ignore.
    async def actions_for(d):
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
        return await client.text_document_code_action_async(params)

    for fixable in moved:
        actions = await actions_for(fixable)
        fixes = [a for a in actions if a.title.startswith(f"Fix {fixable.code}:")]
        if fixes:
            break
    else:
        raise AssertionError("no finding of train.py has a safe fix")
    assert fixes[0].is_preferred
    assert f"Ignore {fixable.code} on this line" in [a.title for a in actions]

    # "Fix all safe fixes in this file", applied, is what `--fix` writes (the CLI's copy
    # gets the same added line first).
    (workspace / "cli" / "train.py").write_text(text)
    fix_all = next(a for a in actions if a.title.startswith("Fix all safe fixes"))
    fixed = apply(text, edits_of(fix_all, uri))
    subprocess.run([NPU_MEM, "scan", "--no-cache", "--fix", "--fail-on", "never", "."],
                   cwd=workspace / "cli", check=True, capture_output=True)
    assert fixed == (workspace / "cli" / "train.py").read_text()
    assert fixed != text
    assert path.read_text() == text[len("# edited\n"):], "the server writes no file"

    # The server asked to hear of changes to the files that feed project facts.
    watched = [w["globPattern"] for r in client.registrations for w in r.register_options["watchers"]]
    assert "**/*.{py,pyi,sh,bash,ipynb}" in watched

    # Hover on a diagnostic: the rule's documentation.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=fixable.range.start))
    for part in ("What it finds", "Why it matters on an Ascend NPU", "Example", "Use instead"):
        assert part in hover.contents.value
