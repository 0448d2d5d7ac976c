"""NoteStore reads and writes: error codes, exists/conflict rules, line endings, BOM and mode kept,
listing, unique names and write previews."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import NoteStore, sha256
from plugin_bridge.vault.paths import TEMP_PREFIX

PLAN = "# Plan\nship it\n"


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Plan.md").write_text(PLAN, encoding="utf-8")
    return NoteStore(root, tmp_path / "data")


def code_of(excinfo: pytest.ExceptionInfo[VaultError]) -> str:
    return excinfo.value.code


# -- reading -------------------------------------------------------------------------------


def test_read_returns_text_and_the_sha256_of_the_bytes(store: NoteStore) -> None:
    """The hash is of the file's bytes, so it detects any change, BOM and line endings included."""
    note = store.read("Projects/Plan.md")
    assert (note.path, note.content) == ("Projects/Plan.md", PLAN)
    assert note.hash == sha256((store.root / "Projects" / "Plan.md").read_bytes())


def test_a_missing_note_is_not_found(store: NoteStore) -> None:
    """Reading a path with no file says not_found, naming the path."""
    with pytest.raises(VaultError, match=r"Nope\.md") as caught:
        store.read("Nope.md")
    assert code_of(caught) == "not_found"


@pytest.mark.parametrize(
    "raw",
    [b"\x00\x01\x02binary", b"PNG\r\n\x1a\n\x00\x00\x00\rIHDR"],
    ids=["nul-bytes", "png-header"],
)
def test_binary_files_are_not_text(store: NoteStore, raw: bytes) -> None:
    """A binary .md file is refused with not_text, and append leaves it alone."""
    (store.root / "blob.md").write_bytes(raw)
    for attempt in (lambda: store.read("blob.md"), lambda: store.append("blob.md", "x")):
        with pytest.raises(VaultError) as caught:
            attempt()
        assert code_of(caught) == "not_text"
    assert (store.root / "blob.md").read_bytes() == raw


def test_a_stray_non_utf8_byte_reads_lossy_and_only_an_overwrite_writes(store: NoteStore) -> None:
    """One Latin-1 byte: the note reads with U+FFFD and lossy set; append and modify refuse
    (they would rewrite that byte), an explicit overwrite replaces the note."""
    raw = "Café au lait\n".encode() + "caf\xe9\n".encode("latin-1")
    (store.root / "Mixed.md").write_bytes(raw)
    note = store.read("Mixed.md")
    assert note.lossy and note.content == "Café au lait\ncaf\ufffd\n"
    for attempt in (
        lambda: store.append("Mixed.md", "x"),
        lambda: store.modify("Mixed.md", "y", expected_hash=note.hash),
    ):
        with pytest.raises(VaultError) as caught:
            attempt()
        assert code_of(caught) == "not_text" and "overwrite" in str(caught.value)
    assert (store.root / "Mixed.md").read_bytes() == raw
    store.create("Mixed.md", "Café\n", overwrite=True)
    assert not store.read("Mixed.md").lossy


def test_a_note_over_five_megabytes_is_too_large(store: NoteStore) -> None:
    """The default limit is 5 MB: one byte more is too_large, exactly 5 MB reads."""
    limit = 5 * 1024 * 1024
    (store.root / "huge.md").write_bytes(b"a" * (limit + 1))
    (store.root / "edge.md").write_bytes(b"a" * limit)
    with pytest.raises(VaultError, match="MB") as caught:
        store.read("huge.md")
    assert code_of(caught) == "too_large"
    assert len(store.read("edge.md").content) == limit


def test_writing_more_than_the_limit_is_too_large_and_writes_nothing(tmp_path: Path) -> None:
    """New content over max_bytes is refused before anything touches the disk."""
    store = NoteStore(tmp_path / "v", tmp_path / "d", max_bytes=100)
    (tmp_path / "v").mkdir()
    with pytest.raises(VaultError) as caught:
        store.create("Big.md", "x" * 101)
    assert code_of(caught) == "too_large"
    assert list((tmp_path / "v").iterdir()) == []


def test_a_folder_named_like_a_note_is_not_a_note(store: NoteStore) -> None:
    """A directory called 'X.md' is refused rather than replaced."""
    (store.root / "Dir.md").mkdir()
    for attempt in (lambda: store.read("Dir.md"), lambda: store.create("Dir.md", "x")):
        with pytest.raises(VaultError) as caught:
            attempt()
        assert code_of(caught) == "forbidden_path"
    assert (store.root / "Dir.md").is_dir()


def test_a_note_renamed_on_disk_is_read_at_its_new_path(store: NoteStore) -> None:
    """After a rename outside the bridge the new path reads and the old one is not_found."""
    seen = store.read("Projects/Plan.md")
    os.rename(store.root / "Projects" / "Plan.md", store.root / "Projects" / "Roadmap.md")
    assert store.read("Projects/Roadmap.md").content == PLAN
    with pytest.raises(VaultError) as caught:
        store.read("Projects/Plan.md")
    assert code_of(caught) == "not_found"
    store.modify("Projects/Roadmap.md", "# Roadmap\n", expected_hash=seen.hash)
    assert store.read("Projects/Roadmap.md").content == "# Roadmap\n"


def test_info_gives_size_and_mtime_without_reading(store: NoteStore) -> None:
    """info() answers for a note and says not_found for a missing one."""
    info = store.info("Projects/Plan.md")
    assert (info.path, info.size) == ("Projects/Plan.md", len(PLAN.encode()))
    with pytest.raises(VaultError) as caught:
        store.info("Projects/Missing.md")
    assert code_of(caught) == "not_found"


# -- create / modify / append ------------------------------------------------------------


def test_create_makes_missing_folders_and_reports_it_created(store: NoteStore) -> None:
    """A new note in new folders is written and its result says created with no previous hash."""
    result = store.create("Inbox/2024/Idea.md", "idea\n")
    assert (result.path, result.created, result.previous_hash) == ("Inbox/2024/Idea.md", True, None)
    assert (store.root / "Inbox" / "2024" / "Idea.md").read_text() == "idea\n"
    assert result.hash == sha256(b"idea\n")


def test_create_never_overwrites_unless_asked(store: NoteStore) -> None:
    """An existing note is kept (exists); overwrite=True replaces it and reports the old hash."""
    old_hash = store.read("Projects/Plan.md").hash
    with pytest.raises(VaultError, match="already exists") as caught:
        store.create("Projects/Plan.md", "new")
    assert code_of(caught) == "exists"
    assert store.read("Projects/Plan.md").content == PLAN
    result = store.create("Projects/Plan.md", "new", overwrite=True)
    assert (result.created, result.previous_hash) == (False, old_hash)
    assert store.read("Projects/Plan.md").content == "new"


def test_modify_fails_with_conflict_when_the_note_changed_since_read(store: NoteStore) -> None:
    """A note edited by the user after the caller read it is not overwritten."""
    seen = store.read("Projects/Plan.md")
    (store.root / "Projects" / "Plan.md").write_text("# Plan\nedited by the user\n")
    with pytest.raises(VaultError, match="read it again") as caught:
        store.modify("Projects/Plan.md", "model's version", expected_hash=seen.hash)
    assert code_of(caught) == "conflict"
    assert store.read("Projects/Plan.md").content == "# Plan\nedited by the user\n"
    fresh = store.read("Projects/Plan.md")
    result = store.modify("Projects/Plan.md", "merged", expected_hash=fresh.hash)
    assert (result.previous_hash, store.read("Projects/Plan.md").content) == (fresh.hash, "merged")


def test_modify_of_a_missing_note_is_not_found(store: NoteStore) -> None:
    """modify never creates."""
    with pytest.raises(VaultError) as caught:
        store.modify("Ghost.md", "x", expected_hash=sha256(b""))
    assert code_of(caught) == "not_found"
    assert not (store.root / "Ghost.md").exists()


@pytest.mark.parametrize(
    ("before", "added", "after"),
    [
        (b"line", "more", b"line\nmore"),
        (b"line\n", "more\n", b"line\nmore\n"),
        (b"", "first", b"first"),
        (b"a\r\nb", "c\nd", b"a\r\nb\r\nc\r\nd"),
        (b"\xef\xbb\xbfbom\n", "x", b"\xef\xbb\xbfbom\nx"),
        (b"\xef\xbb\xbf", "x", b"\xef\xbb\xbfx"),
        (b"mixed\r\nends\nhere", "x", b"mixed\r\nends\nhere\r\nx"),
    ],
    ids=["no-final-newline", "final-newline", "empty", "crlf", "bom", "bom-only", "mixed-kept"],
)
def test_append_adds_a_line_break_only_if_needed_and_keeps_old_bytes(
    store: NoteStore, before: bytes, added: str, after: bytes
) -> None:
    """Appending keeps every earlier byte and uses the note's own line ending."""
    (store.root / "Log.md").write_bytes(before)
    result = store.append("Log.md", added)
    assert (store.root / "Log.md").read_bytes() == after
    assert (result.hash, result.previous_hash) == (sha256(after), sha256(before))


def test_append_to_a_missing_note_is_not_found(store: NoteStore) -> None:
    """append never creates a note."""
    with pytest.raises(VaultError, match="append") as caught:
        store.append("Nope.md", "x")
    assert code_of(caught) == "not_found"


# -- line endings, BOM, mode --------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "content", "after"),
    [
        (b"one\r\ntwo\r\n", "new one\nnew two\n", b"new one\r\nnew two\r\n"),
        (b"one\r\ntwo\r\n", "already\r\ncrlf\r\n", b"already\r\ncrlf\r\n"),
        (b"one\ntwo\n", "model\r\nwrote crlf\r\n", b"model\nwrote crlf\n"),
        (b"\xef\xbb\xbfone\n", "new\n", b"\xef\xbb\xbfnew\n"),
        (b"\xef\xbb\xbfone\r\n", "new\nlines\n", b"\xef\xbb\xbfnew\r\nlines\r\n"),
        (b"one\n", "\ufeffasked for a bom\n", b"\xef\xbb\xbfasked for a bom\n"),
        (b"\xef\xbb\xbfone\n", "\ufeffno double bom\n", b"\xef\xbb\xbfno double bom\n"),
    ],
    ids=[
        "crlf",
        "crlf-no-doubling",
        "lf-stays-lf",
        "bom",
        "bom-and-crlf",
        "bom-in-content",
        "bom-not-doubled",
    ],
)
def test_modify_keeps_line_endings_and_bom(
    store: NoteStore, before: bytes, content: str, after: bytes
) -> None:
    """The file's CRLF/LF convention and UTF-8 BOM survive a rewrite."""
    (store.root / "Win.md").write_bytes(before)
    store.modify("Win.md", content, expected_hash=sha256(before))
    assert (store.root / "Win.md").read_bytes() == after


def test_a_bom_note_reads_without_the_bom_and_round_trips(store: NoteStore) -> None:
    """The BOM is not part of the text a caller sees, yet stays in the file."""
    (store.root / "Bom.md").write_bytes(b"\xef\xbb\xbf# Title\r\n")
    note = store.read("Bom.md")
    assert note.content == "# Title\r\n"
    store.modify("Bom.md", note.content + "body\n", expected_hash=note.hash)
    assert (store.root / "Bom.md").read_bytes() == b"\xef\xbb\xbf# Title\r\nbody\r\n"


def test_overwrite_keeps_the_file_mode(store: NoteStore) -> None:
    """A note private to its owner (0600) stays 0600 after every kind of write."""
    path = store.root / "Private.md"
    path.write_text("secret plan\n")
    path.chmod(0o600)
    store.create("Private.md", "v2\n", overwrite=True)
    store.append("Private.md", "v3")
    store.modify("Private.md", "v4", expected_hash=store.read("Private.md").hash)
    store.undo("Private.md")
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_new_note_gets_the_usual_mode_for_the_umask(store: NoteStore) -> None:
    """New notes are created like any editor would: 0666 minus the umask."""
    umask = os.umask(0o022)
    try:
        store.create("New.md", "x")
    finally:
        os.umask(umask)
    assert (store.root / "New.md").stat().st_mode & 0o777 == 0o644


# -- listing -----------------------------------------------------------------------------


def test_list_notes_shows_notes_only_sorted_by_path(store: NoteStore) -> None:
    """System and hidden folders, temp files and non-note files are left out."""
    root = store.root
    for rel in [".obsidian/app.md", ".git/x.md", ".trash/old.md", ".hidden/secret.md"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    for name in [f"{TEMP_PREFIX}abc", f"{TEMP_PREFIX}1f2e", "draft.md.swp", "x.md~", "pic.png"]:
        (root / name).write_text("x")
    store.create("a b.md", "a")
    store.create("a/b.md", "b")
    (root / "Board.canvas").write_text("{}")
    assert [n.path for n in store.list_notes()] == [
        "Board.canvas",
        "Projects/Plan.md",
        "a b.md",
        "a/b.md",
    ]


def test_list_notes_respects_folder_and_limit(store: NoteStore) -> None:
    """Listing a folder covers its subfolders only; limit cuts the sorted list."""
    for i in range(5):
        store.create(f"Projects/Sub/{i}.md", str(i))
    store.create("Other/x.md", "x")
    listed = store.list_notes("Projects", limit=3)
    assert [n.path for n in listed] == [
        "Projects/Plan.md",
        "Projects/Sub/0.md",
        "Projects/Sub/1.md",
    ]
    assert [n.path for n in store.list_notes("Projects/Sub/")][-1] == "Projects/Sub/4.md"
    assert listed[0].size == len(PLAN) and listed[0].mtime > 0
    assert [n.path for n in store.list_notes("/", limit=1)] == ["Other/x.md"]


def test_list_notes_of_a_missing_folder_is_not_found(store: NoteStore) -> None:
    """A folder that does not exist is reported, not silently empty."""
    with pytest.raises(VaultError) as caught:
        store.list_notes("Nowhere")
    assert code_of(caught) == "not_found"


def test_list_notes_skips_links_leading_out_of_the_vault(store: NoteStore, tmp_path: Path) -> None:
    """A linked file or folder outside the vault never shows up in a listing."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (store.root / "Leak.md").symlink_to(outside / "secret.md")
    (store.root / "LinkedDir").symlink_to(outside, target_is_directory=True)
    (store.root / "Alias.md").symlink_to(store.root / "Projects" / "Plan.md")
    assert [n.path for n in store.list_notes()] == ["Alias.md", "Projects/Plan.md"]


# -- unique paths and previews ------------------------------------------------------------


def test_unique_path_adds_numbered_suffixes(store: NoteStore) -> None:
    """A taken name gets ' 1', then ' 2'; a free one is used as is."""
    assert store.unique_path("Projects", "Plan") == "Projects/Plan 1.md"
    store.create("Projects/Plan 1.md", "x")
    assert store.unique_path("Projects/", "Plan") == "Projects/Plan 2.md"
    assert store.unique_path("", "Fresh") == "Fresh.md"
    assert store.unique_path("New folder", "Fresh") == "New folder/Fresh.md"


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ('What: a/b? [[x]] #y ^z | "q" <t> *', "What a b x y z q t.md"),
        ("back\\slash", "back slash.md"),
        ("Notes.md", "Notes.md"),
        ("...hidden.", "hidden.md"),
        ("   ", "Untitled.md"),
        ("###", "Untitled.md"),
        ("tab\there\nnewline", "tab here newline.md"),
        ("日本語のノート", "日本語のノート.md"),
    ],
)
def test_unique_path_sanitises_characters_obsidian_forbids(
    store: NoteStore, title: str, name: str
) -> None:
    """Forbidden characters become single spaces; an empty result is 'Untitled'."""
    assert store.unique_path("", title) == name


def test_unique_path_cuts_long_titles(store: NoteStore) -> None:
    """Very long titles give file names every file system accepts."""
    path = store.unique_path("", "word " * 100)
    assert len(path) <= 130 and path.endswith(".md") and not path.startswith(" ")
    store.create(path, "x")


def test_unique_path_treats_a_dangling_link_as_taken(store: NoteStore) -> None:
    """A broken symlink occupies its name: the next free name is chosen."""
    (store.root / "Idea.md").symlink_to(store.root / "gone.md")
    assert store.unique_path("", "Idea") == "Idea 1.md"


def test_a_planned_rewrite_is_a_unified_diff_of_current_to_new(store: NoteStore) -> None:
    """Confirmations show exactly the changed lines."""
    diff = store.plan_create("Projects/Plan.md", "# Plan\nship it today\n", overwrite=True).diff
    assert diff.splitlines() == [
        "--- a/Projects/Plan.md",
        "+++ b/Projects/Plan.md",
        "@@ -1,2 +1,2 @@",
        " # Plan",
        "-ship it",
        "+ship it today",
    ]


def test_previews_of_new_notes_diff_from_nothing(store: NoteStore) -> None:
    """A note that does not exist yet previews as all-added lines."""
    for diff in (
        store.plan_create("New.md", "a\nb\n", overwrite=True).diff,
        store.plan_create("New.md", "a\nb\n").diff,
    ):
        assert diff.splitlines()[:2] == ["--- /dev/null", "+++ b/New.md"]
        assert diff.splitlines()[-2:] == ["+a", "+b"]
    assert not (store.root / "New.md").exists()


def test_preview_create_of_an_existing_note_says_exists(store: NoteStore) -> None:
    """The preview fails the same way the create would."""
    with pytest.raises(VaultError) as caught:
        store.plan_create("Projects/Plan.md", "x")
    assert code_of(caught) == "exists"


def test_preview_append_shows_only_the_added_lines_without_cr_noise(store: NoteStore) -> None:
    """A CRLF note's preview shows plain added lines and the note stays untouched."""
    path = store.root / "Log.md"
    path.write_bytes(b"day one\r\nday two")
    diff = store.plan_append("Log.md", "day three").diff
    assert diff.splitlines() == [
        "--- a/Log.md",
        "+++ b/Log.md",
        "@@ -1,2 +1,3 @@",
        " day one",
        "-day two",
        "\\ No newline at end of file",
        "+day two",
        "+day three",
        "\\ No newline at end of file",
    ]
    assert path.read_bytes() == b"day one\r\nday two"


def test_a_planned_write_is_made_only_while_the_note_is_as_planned(store: NoteStore) -> None:
    """A write worked out first (for a review, or for Obsidian to apply) and made later writes
    nothing when the note changed in between, and a new note that appeared meanwhile exists."""
    plan = store.plan_edit("Projects/Plan.md", [("ship it", "ship it now")])
    (store.root / "Projects" / "Plan.md").write_text(PLAN + "typed\n", encoding="utf-8")
    with pytest.raises(VaultError) as caught:
        store.write_planned(plan, "model")
    assert caught.value.code == "conflict"
    assert (store.root / "Projects" / "Plan.md").read_text(encoding="utf-8") == PLAN + "typed\n"
    new = store.plan_create("New.md", "a\n")
    (store.root / "New.md").write_text("b\n", encoding="utf-8")
    with pytest.raises(VaultError) as caught:
        store.write_planned(new, "model")
    assert caught.value.code == "exists"


def test_a_write_obsidian_applied_keeps_undo_and_audit(store: NoteStore) -> None:
    """record_applied writes nothing itself; undo restores the planned-from text once Obsidian
    has saved the new text."""
    plan = store.plan_edit("Projects/Plan.md", [("ship it", "ship it now")])
    after = plan.after
    (store.root / "Projects" / "Plan.md").write_text(after, encoding="utf-8")  # Obsidian saves
    written = store.record_applied(plan, sha256(after.encode()), "model")
    assert (written.hash, written.previous_hash) == (sha256(after.encode()), sha256(PLAN.encode()))
    (entry,) = store.audit.entries(1)
    assert (entry["action"], entry["origin"]) == ("edit", "model")
    store.undo("Projects/Plan.md")
    assert (store.root / "Projects" / "Plan.md").read_text(encoding="utf-8") == PLAN
