//! Workspaces as people's code leaves them, under the one rule the zip, the fork and the
//! listing share: a virtual environment's links, a link inside the workspace, links to
//! `/` and to `/proc/1/environ`, a dangling link and a file the sandbox's user may not read
//! (mode 000). (A named pipe or a socket cannot be made in this machine's sandbox: the
//! agent's own tests list them.)
//! Each ends in a readable zip (Python's zipfile and `unzip -t`) that holds the links as
//! links and names the rest in SKIPPED.txt, a listing that says what each entry is, and
//! a fork whose venv still runs; the next run in the conversation works.

use lens_types::{ForkResponse, WorkspaceListing};
use reqwest::StatusCode;
use serde_json::json;

use crate::{
    fork::{run, stdout},
    test_app::TestApp,
};

/// A venv (`python3 -m venv --without-pip`, as the issue's person made it) and awkward
/// entries beside it.
const AWKWARD: &str = "```bash\npython3 -m venv --without-pip env && mkdir -p data out \
&& echo hello > data/a.txt && ln -s a.txt data/link.txt && ln -s / out/root && ln -s /proc/1/environ out/environ \
&& ln -s /nonexistent out/dead && echo secret > out/locked && chmod 000 out/locked && echo made \
&& (cat out/locked > /dev/null 2>&1 && echo readable || echo locked)\n```";

/// Each member of the zip at argv[1], sorted: `name link target`, `name file size`; after
/// `testzip` checked every CRC. SKIPPED.txt's text follows a `--` line.
const READ: &str = r#"
import stat, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None, "a CRC does not match"
    skipped = ""
    for info in sorted(z.infolist(), key=lambda i: i.filename):
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            print(info.filename, "link", z.read(info).decode())
        else:
            print(info.filename, "file", info.file_size)
        if info.filename == "SKIPPED.txt":
            skipped = z.read(info).decode()
    print("--")
    print(skipped, end="")
"#;

#[tokio::test]
async fn a_venv_links_and_a_locked_file_zip_list_and_fork_by_one_rule() {
    let app = TestApp::builder().sandbox().settings_model().await;
    holds_the_one_rule(&app).await;
}

/// The zip, the listing and the fork of an awkward workspace, as a person sees them.
pub async fn holds_the_one_rule(app: &TestApp) {
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(&admin, &cid, AWKWARD).await;
    // Mode 000 locks out the sandbox's user, not a root one (the fake gateway's
    // sandboxes run as root): what that user can read is what the zip can.
    let locked = match stdout(&made).as_str() {
        "made\nlocked\n" => true,
        "made\nreadable\n" => false,
        other => panic!("{other}"),
    };

    // The zip: whole, readable, links as links, the rest named.
    let resp = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/sandbox/zip")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.bytes().await.expect("the zip's body ends whole");
    let path = app.dir.path().join("awkward.zip");
    std::fs::write(&path, &bytes).unwrap();
    let read = tokio::process::Command::new("python3").arg("-c").arg(READ).arg(&path).output().await.unwrap();
    assert!(read.status.success(), "zipfile: {}", String::from_utf8_lossy(&read.stderr));
    let listed = String::from_utf8(read.stdout).unwrap();
    let (members, skipped) = listed.split_once("--\n").unwrap();
    for line in [
        "data/a.txt file 6",
        "data/link.txt link a.txt",
        "out/root link /",
        "out/environ link /proc/1/environ",
        "env/bin/python3 link /",
        "env/bin/python link python3",
        "env/pyvenv.cfg file",
    ] {
        assert!(members.lines().any(|l| l.starts_with(line)), "{line} in:\n{members}");
    }
    assert!(!members.lines().any(|l| l.starts_with("out/dead ")), "out/dead is not in the zip:\n{members}");
    assert!(skipped.contains("out/dead: a link that leads nowhere"), "{skipped}");
    assert_eq!(members.lines().any(|l| l.starts_with("out/locked file 7")), !locked, "{members}");
    assert_eq!(skipped.contains("out/locked: could not be read"), locked, "{skipped}");
    let tested = tokio::process::Command::new("unzip").arg("-tq").arg(&path).output().await.unwrap();
    assert!(tested.status.success(), "unzip -t: {}", String::from_utf8_lossy(&tested.stdout));

    // The listing says what each entry is; a link to a folder is no folder.
    let (status, body) = admin.get(&format!("/api/v1/chats/{cid}/sandbox/files?path=out")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listing: WorkspaceListing = serde_json::from_value(body).unwrap();
    let entry = |name: &str| listing.entries.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!((entry("root").is_dir, entry("root").link_target.as_deref()), (false, Some("/")));
    assert_eq!(entry("root").left_out, None);
    assert_eq!(entry("dead").left_out.as_deref(), Some("a link that leads nowhere"));
    assert_eq!((entry("locked").link_target.as_ref(), entry("locked").left_out.as_ref()), (None, None));

    // The fork: made, its note naming what it left out, its links links, its venv running.
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": made.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let forked: ForkResponse = serde_json::from_value(body).unwrap();
    assert!(forked.note.contains("out/dead (a link that leads nowhere)"), "{}", forked.note);
    assert_eq!(forked.note.contains("out/locked (could not be read"), locked, "{}", forked.note);
    let fid = forked.chat.id;
    let checked = run(
        &admin,
        &fid,
        "```bash\nenv/bin/python -c 'print(42)'; readlink data/link.txt out/root out/environ; cat data/link.txt; \
         ls out | tr '\\n' ' '\n```",
    )
    .await;
    let out = if locked { "environ root " } else { "environ locked root " };
    assert_eq!(stdout(&checked), format!("42\na.txt\n/\n/proc/1/environ\nhello\n{out}"));

    // The next run in the first conversation works.
    let next = run(&admin, &cid, "```bash\necho next\n```").await;
    assert_eq!(stdout(&next), "next\n");
}

#[tokio::test]
async fn a_workspace_of_more_files_than_a_zip_or_a_fork_takes_is_answered_clearly() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(&admin, &cid, "```bash\nmkdir many && cd many && seq 10001 | xargs touch && ls | wc -l\n```").await;
    assert_eq!(stdout(&made), "10001\n");
    let (status, body) = admin.get(&format!("/api/v1/chats/{cid}/sandbox/zip")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("more than 10000 files"), "{body}");
    let (_, before) = admin.get("/api/v1/chats").await;
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": made.id})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("more than 10000 files"), "{body}");
    let (_, after) = admin.get("/api/v1/chats").await;
    assert_eq!(after, before, "the failed fork left no conversation");
    // The next run works.
    assert_eq!(stdout(&run(&admin, &cid, "```bash\necho next\n```").await), "next\n");
}
