//! Workspaces as people's code leaves them, under the one rule the zip, the fork and the
//! listing share: a virtual environment's links, a link inside the workspace, a hard link, links to
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
&& echo hello > data/a.txt && ln data/a.txt data/hard.txt && ln -s a.txt data/link.txt && ln -s / out/root && ln -s /proc/1/environ out/environ \
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
        "data/hard.txt file 6",
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
         [ data/a.txt -ef data/hard.txt ] && echo one file, two names; \
         ls out | tr '\\n' ' '\n```",
    )
    .await;
    let out = if locked { "environ root " } else { "environ locked root " };
    assert_eq!(stdout(&checked), format!("42\na.txt\n/\n/proc/1/environ\nhello\none file, two names\n{out}"));

    // The next run in the first conversation works.
    let next = run(&admin, &cid, "```bash\necho next\n```").await;
    assert_eq!(stdout(&next), "next\n");
}

#[tokio::test]
async fn a_workspace_of_more_files_than_a_zip_or_a_fork_takes_is_answered_clearly() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(&admin, &cid, "```bash\nmkdir many && cd many && seq 20000 | xargs touch && ls | wc -l\n```").await;
    assert_eq!(stdout(&made), "20000\n");
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

/// Trees people's tools make and trees a hostile run makes: `node_modules` with its `.bin`
/// links, a link loop, a 200 MB sparse file (more than a share may be), a name with a
/// newline, names that are not UTF-8 (a file, and a folder with a file in it), a folder
/// 200 deep.
const HOSTILE: &str = "```bash\nmkdir -p node_modules/left-pad/bin node_modules/.bin \
&& echo 'console.log(1)' > node_modules/left-pad/bin/cli.js && ln -s ../left-pad/bin/cli.js node_modules/.bin/left-pad \
&& ln -s loop-b loop-a && ln -s loop-a loop-b && truncate -s 200M big.sparse \
&& printf x > \"$(printf 'two\\nlines.txt')\" && printf y > \"$(printf 'bad\\377.txt')\" \
&& mkdir \"$(printf 'dir\\377')\" && echo z > \"$(printf 'dir\\377')/in.txt\" \
&& deep=$(printf 'd/%.0s' $(seq 200)) && mkdir -p \"$deep\" && echo bottom > \"${deep}f.txt\" && echo made\n```";

/// Each member of the zip at argv[1] as JSON `[name, "link" | "file", target | size]`,
/// after `testzip` checked every CRC; then SKIPPED.txt's text.
const READ_JSON: &str = r#"
import json, stat, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None, "a CRC does not match"
    members = []
    for info in z.infolist():
        if stat.S_ISLNK(info.external_attr >> 16):
            members.append([info.filename, "link", z.read(info).decode()])
        else:
            members.append([info.filename, "file", info.file_size])
    skipped = z.read("SKIPPED.txt").decode() if "SKIPPED.txt" in z.namelist() else ""
    print(json.dumps({"members": members, "skipped": skipped}))
"#;

#[tokio::test]
async fn node_modules_loops_sparse_files_odd_names_and_deep_folders_zip_list_and_fork() {
    let app = TestApp::builder().sandbox().settings_model().await;
    hostile_trees_hold_the_rule(&app).await;
}

/// The zip, the listing and the fork of [`HOSTILE`]'s trees.
pub async fn hostile_trees_hold_the_rule(app: &TestApp) {
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(&admin, &cid, HOSTILE).await;
    assert_eq!(stdout(&made), "made\n");
    let deep = format!("{}f.txt", "d/".repeat(200));

    // The zip: whole, what it can hold held, the rest named.
    let resp = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/sandbox/zip")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let path = app.dir.path().join("hostile.zip");
    std::fs::write(&path, resp.bytes().await.expect("the zip's body ends whole")).unwrap();
    let read = tokio::process::Command::new("python3").arg("-c").arg(READ_JSON).arg(&path).output().await.unwrap();
    assert!(read.status.success(), "zipfile: {}", String::from_utf8_lossy(&read.stderr));
    let zip: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    let mut members: Vec<(String, String, String)> = zip["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m[0].as_str().unwrap().to_owned(), m[1].as_str().unwrap().to_owned(), m[2].to_string()))
        .collect();
    members.sort();
    let want = |name: &str, kind: &str, value: &str| (name.to_owned(), kind.to_owned(), value.to_owned());
    assert_eq!(
        members,
        [
            want("SKIPPED.txt", "file", &zip["skipped"].as_str().unwrap().len().to_string()),
            want(&deep, "file", "7"),
            want("node_modules/.bin/left-pad", "link", "\"../left-pad/bin/cli.js\""),
            want("node_modules/left-pad/bin/cli.js", "file", "15"),
            want("two\nlines.txt", "file", "1"),
        ]
    );
    let skipped = zip["skipped"].as_str().unwrap();
    for line in [
        "bad\u{fffd}.txt: a name that is not UTF-8 text",
        "big.sparse: larger than the 25 MB a file may be when shared",
        "dir\u{fffd}: a name that is not UTF-8 text",
        "loop-a: a link that leads nowhere",
        "loop-b: a link that leads nowhere",
    ] {
        assert!(skipped.lines().any(|l| l == line), "{line} in:\n{skipped}");
    }
    let tested = tokio::process::Command::new("unzip").arg("-tq").arg(&path).output().await.unwrap();
    assert!(tested.status.success(), "unzip -t: {}", String::from_utf8_lossy(&tested.stdout));

    // The listing says what each entry is.
    let (status, body) = admin.get(&format!("/api/v1/chats/{cid}/sandbox/files")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listing: WorkspaceListing = serde_json::from_value(body).unwrap();
    let entry = |name: &str| listing.entries.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(entry("loop-a").left_out.as_deref(), Some("a link that leads nowhere"));
    assert_eq!(entry("dir\u{fffd}").left_out.as_deref(), Some("a name that is not UTF-8 text"));
    assert_eq!((entry("big.sparse").size, entry("big.sparse").left_out.as_ref()), (200 << 20, None));
    assert_eq!((entry("two\nlines.txt").size, entry("two\nlines.txt").left_out.as_ref()), (1, None));
    assert!(entry("d").is_dir);

    // The fork: every file it can hold, the rest named in its note.
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": made.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let forked: ForkResponse = serde_json::from_value(body).unwrap();
    for part in ["loop-a (a link that leads nowhere)", "dir\u{fffd} (a name that is not UTF-8 text)"] {
        assert!(forked.note.contains(part), "{part} in {}", forked.note);
    }
    let checked = run(
        &admin,
        &forked.chat.id,
        "```bash\nreadlink node_modules/.bin/left-pad; cat node_modules/.bin/left-pad; stat -c %s big.sparse; \
         cat \"$(printf 'two\\nlines.txt')\"; find d -name f.txt -exec cat {} +; \
         LC_ALL=C ls -b | tr '\\n' ' '\n```",
    )
    .await;
    assert_eq!(
        stdout(&checked),
        "../left-pad/bin/cli.js\nconsole.log(1)\n209715200\nxbottom\nbig.sparse d node_modules two\\nlines.txt "
    );

    // The next run in the first conversation works.
    assert_eq!(stdout(&run(&admin, &cid, "```bash\necho next\n```").await), "next\n");
}

/// A file a run keeps writing while the workspace is zipped and forked: both end whole,
/// the file either as it was when read or named as cut short, never a broken zip.
#[tokio::test]
async fn a_file_growing_while_it_is_zipped_and_forked_is_kept_or_named() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(&admin, &cid, "```bash\nhead -c 3000000 /dev/urandom > grow.bin && echo made\n```").await;
    assert_eq!(stdout(&made), "made\n");
    let growing = admin
        .ask(
            &cid,
            "```bash\nfor i in $(seq 200); do head -c 32768 /dev/urandom >> grow.bin; sleep 0.05; done; echo grown\n```",
        )
        .await;

    let resp = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/sandbox/zip")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let path = app.dir.path().join("growing.zip");
    std::fs::write(&path, resp.bytes().await.expect("the zip's body ends whole")).unwrap();
    let read = tokio::process::Command::new("python3").arg("-c").arg(READ_JSON).arg(&path).output().await.unwrap();
    assert!(read.status.success(), "zipfile: {}", String::from_utf8_lossy(&read.stderr));
    let zip: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    let skipped = zip["skipped"].as_str().unwrap();
    let size = zip["members"].as_array().unwrap().iter().find(|m| m[0] == "grow.bin").map(|m| m[2].as_u64().unwrap());
    match size {
        Some(size) if skipped.is_empty() => assert!(size >= 3_000_000, "kept as it was read: {size}"),
        Some(_) => {
            assert!(skipped.contains("grow.bin: cut short: `grow.bin` changed while it was copied"), "{skipped}")
        }
        None => panic!("grow.bin is in the zip, whole or cut short: {zip}"),
    }
    let tested = tokio::process::Command::new("unzip").arg("-tq").arg(&path).output().await.unwrap();
    assert!(tested.status.success(), "unzip -t: {}", String::from_utf8_lossy(&tested.stdout));

    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": made.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let forked: ForkResponse = serde_json::from_value(body).unwrap();
    let cut = forked.note.contains("grow.bin (cut short: `grow.bin` changed while it was copied");
    let size = stdout(&run(&admin, &forked.chat.id, "```bash\nstat -c %s grow.bin\n```").await);
    let size: u64 = size.trim().parse().unwrap();
    // Whole (at least as it was made), or as far as it was read and named.
    assert_eq!(size, forked.bytes_copied, "the fork holds what it copied");
    assert!(cut || size >= 3_000_000, "{size} bytes, note: {}", forked.note);

    // The run that grew it ends as it would have; the next run works.
    assert_eq!(stdout(&admin.done_after(&cid, &growing, "0").await), "grown\n");
    assert_eq!(stdout(&run(&admin, &cid, "```bash\nstat -c %s grow.bin\n```").await), "9553600\n");
}
