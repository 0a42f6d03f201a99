"""Drives `idemlint lsp` with a real client library: pytest-lsp's pygls client.

Each test runs once per recorded client capability set that pytest-lsp ships (VS Code,
Neovim, Emacs), so the position encoding the server negotiates differs between runs
(VS Code offers none, so UTF-16; Neovim 0.11 lists utf-8 first; Emacs 29 utf-32). The
expected ranges are computed here with pygls' own PositionCodec from the document text,
independently of the server's conversion code.

Run through scripts/test-lsp-client.sh, which builds the binary and passes its path in
IDEMLINT_BIN.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

IDEMLINT = os.environ.get("IDEMLINT_BIN", "idemlint")
TIMEOUT = 30  # seconds for any single server reply
DOCS = "https://github.com/idemlint/idemlint/blob/main/rules/docs/"

# Non-ASCII text before the finding on its line: "ü" is 2 UTF-8 bytes / 1 UTF-16 unit,
# "💳" 4 bytes / 2 units, so each encoding gives a different column.
KOTLIN_BAD = """import java.util.UUID

suspend fun charge(api: Api): Charge {
    val note = "ü💳"; return retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }
}
"""
KOTLIN_FIXED = """import java.util.UUID

suspend fun charge(api: Api): Charge {
    val idempotencyKey = UUID.randomUUID().toString()
    val note = "ü💳"; return retryOnTransient { api.createCharge(idempotencyKey = idempotencyKey) }
}
"""
RUST_BAD = """// Überweisung: 💶 capture
pub fn capture(client: &reqwest::blocking::Client) -> Result<reqwest::blocking::Response, backoff::Error<reqwest::Error>> {
    backoff::retry(backoff::ExponentialBackoff::default(), || {
        let key = /* 🔑 */ uuid::Uuid::new_v4().to_string();
        Ok(client.post("https://psp.example.com/v1/charges").header("Idempotency-Key", key).send()?)
    })
}
"""
JAVA_BAD = """class ChargeJob {
    Charge charge(PaymentsApi api, ChargeRequest body) {
        return retryTemplate.execute(ctx -> {
            String key = /* Schlüssel 🔑 */ UUID.randomUUID().toString();
            return api.createCharge(key, body);
        });
    }
}
interface PaymentsApi {
    @POST("v1/charges")
    Call<Charge> createCharge(@Header("Idempotency-Key") String key, @Body ChargeRequest body);
}
"""

# Client capability sets recorded by pytest-lsp, and the encoding the server must pick:
# the first of utf-8/utf-16/utf-32 the client lists, UTF-16 when it lists none.
CLIENTS = {"visual-studio-code": "utf-16", "neovim@v0.11.0": "utf-8", "emacs": "utf-32"}


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[IDEMLINT, "lsp"]),
    params=list(CLIENTS),
)
async def client(lsp_client: LanguageClient, request):
    result = await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(capabilities=client_capabilities(request.param))
        ),
        TIMEOUT,
    )
    assert result.capabilities.position_encoding == CLIENTS[request.param]
    lsp_client.idemlint_encoding = result.capabilities.position_encoding
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
    # shutdown then exit: the specification's exit code 0.
    assert lsp_client._server is not None
    assert lsp_client._server.returncode == 0


def expected_range(client: LanguageClient, text: str, needle: str) -> types.Range:
    """The range of `needle` in `text`, in the negotiated encoding, via pygls."""
    lines = text.splitlines(keepends=True)
    line = next(i for i, l in enumerate(lines) if needle in l)
    col = lines[line].index(needle)  # UTF-32 (code points)
    codec = PositionCodec(client.idemlint_encoding)
    return codec.range_to_client_units(
        lines,
        types.Range(
            start=types.Position(line=line, character=col),
            end=types.Position(line=line, character=col + len(needle)),
        ),
    )


async def open_and_wait(client: LanguageClient, uri: str, language: str, text: str):
    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    return client.diagnostics[uri]


def file_uri(tmp_path: pathlib.Path, name: str) -> str:
    return (tmp_path / name).as_uri()


def explain(rule: str) -> str:
    out = subprocess.run(
        [IDEMLINT, "explain", rule], check=True, capture_output=True, text=True
    )
    return out.stdout.rstrip()


async def test_kotlin_diagnostic_hover_fix_and_close(client: LanguageClient, tmp_path):
    uri = file_uri(tmp_path, "Billing job.kt")
    diagnostics = await open_and_wait(client, uri, "kotlin", KOTLIN_BAD)
    assert len(diagnostics) == 1, diagnostics
    d = diagnostics[0]
    assert d.range == expected_range(client, KOTLIN_BAD, "UUID.randomUUID()")
    assert d.code == "key-in-retry-scope"
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.source == "idemlint"
    assert d.code_description is not None
    assert d.code_description.href == DOCS + "key-in-retry-scope.md"
    assert "retryOnTransient" in d.message
    assert d.related_information
    boundary = d.related_information[0]
    assert boundary.location.uri == uri
    assert boundary.location.range.start == expected_range(
        client, KOTLIN_BAD, "retryOnTransient"
    ).start

    # Hover on the diagnostic shows the rule's documentation, as `explain` prints it.
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(
                    line=d.range.start.line, character=d.range.start.character + 1
                ),
            )
        ),
        TIMEOUT,
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == explain("key-in-retry-scope")

    # The fixed text, unsaved: the diagnostics are cleared.
    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=KOTLIN_FIXED)],
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    assert list(client.diagnostics[uri]) == []

    # Reintroduce the bug with an incremental edit, then close: cleared again.
    fixed_lines = KOTLIN_FIXED.splitlines(keepends=True)
    r = expected_range(client, KOTLIN_FIXED, "idempotencyKey)")
    edit_range = types.Range(
        start=r.start,
        end=types.Position(line=r.start.line, character=r.start.character + len("idempotencyKey")),
    )
    assert fixed_lines[r.start.line].count("idempotencyKey)") == 1
    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=edit_range, text="UUID.randomUUID().toString()"
                )
            ],
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    assert [x.code for x in client.diagnostics[uri]] == ["key-in-retry-scope"]

    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    assert list(client.diagnostics[uri]) == []


def edits_for(client: LanguageClient, edit: types.WorkspaceEdit, uri: str):
    """The text edits of `edit` for `uri`, whichever form the server chose."""
    if edit.document_changes:
        (change,) = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        return list(change.edits)
    assert edit.changes is not None
    return list(edit.changes[uri])


def apply_edits(client: LanguageClient, text: str, edits) -> str:
    """Applies text edits (ranges in the negotiated encoding, all relative to `text`)."""
    lines = text.splitlines(keepends=True)
    codec = PositionCodec(client.idemlint_encoding)

    def index(pos: types.Position) -> int:
        p = codec.position_from_client_units(lines, types.Position(pos.line, pos.character))
        return sum(len(l) for l in lines[: p.line]) + p.character

    spans = sorted(
        ((index(e.range.start), index(e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def test_quick_fix_and_fix_all(client: LanguageClient, tmp_path):
    uri = file_uri(tmp_path, "Billing.kt")
    (d,) = await open_and_wait(client, uri, "kotlin", KOTLIN_BAD)
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=d.range,
                context=types.CodeActionContext(diagnostics=[d]),
            )
        ),
        TIMEOUT,
    )
    kinds = [a.kind for a in actions]
    assert kinds == [types.CodeActionKind.QuickFix, "source.fixAll.idemlint"], kinds
    quick, fix_all = actions
    assert quick.diagnostics and quick.diagnostics[0].code == "key-in-retry-scope"
    assert quick.is_preferred
    fixed = apply_edits(client, KOTLIN_BAD, edits_for(client, quick.edit, uri))
    assert apply_edits(client, KOTLIN_BAD, edits_for(client, fix_all.edit, uri)) == fixed
    # The key moved out of the retry lambda: declared once, read by the named argument.
    assert "val idempotencyKey = UUID.randomUUID()" in fixed
    assert "idempotencyKey = idempotencyKey" in fixed

    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.parametrize(
    ("name", "language", "text", "source"),
    [
        ("capture.rs", "rust", RUST_BAD, "uuid::Uuid::new_v4()"),
        ("ChargeJob.java", "java", JAVA_BAD, "UUID.randomUUID()"),
    ],
    ids=["rust", "java"],
)
async def test_rust_and_java_documents(
    client: LanguageClient, tmp_path, name, language, text, source
):
    uri = file_uri(tmp_path, name)
    diagnostics = await open_and_wait(client, uri, language, text)
    assert [d.code for d in diagnostics] == ["key-in-retry-scope"]
    assert diagnostics[0].range == expected_range(client, text, source)


async def test_parse_errors_are_warnings(client: LanguageClient, tmp_path):
    uri = file_uri(tmp_path, "broken.rs")
    diagnostics = await open_and_wait(client, uri, "rust", "fn main() {\n    let x = ;\n}\n")
    assert diagnostics, "a Rust parse error is published"
    assert all(d.code == "parse-error" for d in diagnostics)
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in diagnostics)
    assert diagnostics[0].range.start.line == 1


# A two-file workspace folder: `keepTrying` is no catalogue name, so only its body, in
# Retry.kt, can make Billing.kt's lambda a retry scope.
RETRY_ONCE = """package shop

fun <T> keepTrying(times: Int, block: () -> T): T {
    return block()
}
"""
RETRY_AGAIN = """package shop

fun <T> keepTrying(times: Int, block: () -> T): T {
    var last: Exception? = null
    repeat(times) {
        try {
            return block()
        } catch (e: Exception) {
            last = e
        }
    }
    throw last!!
}
"""
BILLING = """package shop

import java.util.UUID

fun charge(api: Api) = keepTrying(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[IDEMLINT, "lsp"]),
    params=list(CLIENTS),
)
async def workspace_client(lsp_client: LanguageClient, request, tmp_path):
    root = tmp_path / "shop"
    root.mkdir()
    (root / "Retry.kt").write_text(RETRY_ONCE)
    (root / "Billing.kt").write_text(BILLING)
    # The server registers its file watchers when the client allows dynamic registration.
    lsp_client.idemlint_registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams):
        lsp_client.idemlint_registrations.extend(params.registrations)
        return None

    result = await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(request.param),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="shop")],
            )
        ),
        TIMEOUT,
    )
    lsp_client.idemlint_encoding = result.capabilities.position_encoding
    lsp_client.idemlint_root = root
    lsp_client.idemlint_progress = bool(
        (caps := client_capabilities(request.param)).window and caps.window.work_done_progress
    )
    lsp_client.idemlint_dynamic_watch = bool(
        caps.workspace
        and caps.workspace.did_change_watched_files
        and caps.workspace.did_change_watched_files.dynamic_registration
    )
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
    assert lsp_client._server is not None
    assert lsp_client._server.returncode == 0


async def wait_for_codes(client: LanguageClient, uri: str, codes: list[str]):
    """Waits until the diagnostics published for `uri` have exactly these codes."""

    async def loop():
        while [d.code for d in client.diagnostics.get(uri, [])] != codes:
            await client.protocol.wait_for_notification_async(
                types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
            )

    try:
        await asyncio.wait_for(loop(), TIMEOUT)
    except asyncio.TimeoutError:
        got = [d.code for d in client.diagnostics.get(uri, [])]
        raise AssertionError(f"{uri}: expected {codes}, the server published {got}")
    return client.diagnostics[uri]


def check_only(root: pathlib.Path, name: str):
    """`idemlint check ROOT --only FILE --format json`: (line, column, rule) per finding."""
    out = subprocess.run(
        [IDEMLINT, "check", str(root), "--only", str(root / name), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 1), out.stderr
    import json

    return [(f["line"], f["rule"]) for f in json.loads(out.stdout)["findings"]]


async def test_editing_the_helper_file_republishes_the_other_document(
    workspace_client: LanguageClient,
):
    client = workspace_client
    root = client.idemlint_root
    retry_uri = (root / "Retry.kt").as_uri()
    billing_uri = (root / "Billing.kt").as_uri()
    await open_and_wait(client, retry_uri, "kotlin", RETRY_ONCE)
    if client.idemlint_progress:
        # The folder is indexed in the background from `initialized`, with work-done
        # progress: begin, then end.
        async def indexed():
            while [type(v).__name__ for v in client.progress_reports.get("idemlint-index-0", [])] != [
                "WorkDoneProgressBegin",
                "WorkDoneProgressEnd",
            ]:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(indexed(), TIMEOUT)
    if client.idemlint_dynamic_watch:
        methods = [r.method for r in client.idemlint_registrations]
        assert methods == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES], methods
    published = client.protocol.wait_for_notification_async(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=billing_uri, language_id="kotlin", version=1, text=BILLING
            )
        )
    )
    await asyncio.wait_for(published, TIMEOUT)
    await wait_for_codes(client, billing_uri, [])
    assert check_only(root, "Billing.kt") == []

    # The helper, edited and not saved, now retries its block: Billing.kt has a finding.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=retry_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=RETRY_AGAIN)],
        )
    )
    (d,) = await wait_for_codes(client, billing_uri, ["key-in-retry-scope"])
    assert d.range == expected_range(client, BILLING, "UUID.randomUUID()")
    assert "keepTrying" in d.message and "Retry.kt" in d.message
    # What `check ROOT --only Billing.kt` reports once the helper is saved so.
    (root / "Retry.kt").write_text(RETRY_AGAIN)
    assert check_only(root, "Billing.kt") == [(d.range.start.line + 1, d.code)]

    # Closing the helper after reverting it on disk: the folder is analysed from disk again.
    (root / "Retry.kt").write_text(RETRY_ONCE)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=retry_uri))
    )
    await wait_for_codes(client, billing_uri, [])

    # A change on disk reported by the client's file watcher.
    (root / "Retry.kt").write_text(RETRY_AGAIN)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=retry_uri, type=types.FileChangeType.Changed)]
        )
    )
    await wait_for_codes(client, billing_uri, ["key-in-retry-scope"])
