//! A workspace, a folder of it, or one run's files as one zip, streamed: Python's own
//! `zipfile` reads it back byte for byte; the limits of shares hold; nobody else gets it.

use reqwest::{StatusCode, header};

use crate::test_app::TestApp;

/// Prints each member of the zip at argv[1] with the SHA-256 of its bytes, after
/// `testzip` checked every CRC.
const READ: &str = r#"
import hashlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    assert z.testzip() is None, "a CRC does not match"
    for name in sorted(z.namelist()):
        print(name, hashlib.sha256(z.read(name)).hexdigest())
"#;

/// The same over the workspace, as the sandbox sees it.
const HASHES: &str = "```bash\ncd /workspace && find . -path ./.lens -prune -o -type f -print | sed 's|^./||' | LC_ALL=C sort | while read -r f; do printf '%s %s\\n' \"$f\" \"$(sha256sum \"$f\" | cut -d' ' -f1)\"; done\n```";

async fn unzipped(app: &TestApp, bytes: &[u8]) -> String {
    let path = app.dir.path().join("got.zip");
    std::fs::write(&path, bytes).unwrap();
    let out = tokio::process::Command::new("python3").arg("-c").arg(READ).arg(&path).output().await.unwrap();
    assert!(out.status.success(), "zipfile: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn a_workspace_a_folder_and_a_runs_files_download_as_zips_python_reads_byte_for_byte() {
    let app = TestApp::builder().sandbox().config(|c| c.share_max_mb = 3).settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let zip_url = |query: &str| format!("/api/v1/chats/{cid}/sandbox/zip{query}");

    // No sandbox yet: a sentence.
    assert_eq!(admin.get(&zip_url("")).await.0, StatusCode::BAD_REQUEST);

    let aid = admin
        .ask(&cid, "```bash\nmkdir -p out/deep && head -c 2000000 /dev/urandom > out/deep/r.bin && printf 'a,b\\n' > 'données é.csv' && : > empty.txt\n```")
        .await;
    admin.done_after(&cid, &aid, "0").await;
    let aid = admin.ask(&cid, "```bash\nhead -c 1500000 /dev/urandom > second.bin\n```").await;
    let second = admin.done_after(&cid, &aid, "0").await;
    let aid = admin.ask(&cid, HASHES).await;
    let expected = admin.done_after(&cid, &aid, "0").await.steps[0].output.as_ref().unwrap().stdout.clone();
    assert_eq!(expected.lines().count(), 4, "{expected}");

    // The whole workspace.
    let resp = admin.request(reqwest::Method::GET, &zip_url("")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/zip");
    assert!(resp.headers()[header::CONTENT_DISPOSITION].to_str().unwrap().contains("workspace.zip"));
    assert_eq!(unzipped(&app, &resp.bytes().await.unwrap()).await, expected);

    // A folder: its files, named from it.
    let resp = admin.request(reqwest::Method::GET, &zip_url("?path=out")).send().await.unwrap();
    let listed = unzipped(&app, &resp.bytes().await.unwrap()).await;
    let deep = expected.lines().find(|l| l.starts_with("out/deep/r.bin")).unwrap().replacen("out/", "", 1);
    assert_eq!(listed, format!("{deep}\n"));

    // One run's files.
    let query = format!("?message_id={}&step_id=s1", second.id);
    let resp = admin.request(reqwest::Method::GET, &zip_url(&query)).send().await.unwrap();
    let listed = unzipped(&app, &resp.bytes().await.unwrap()).await;
    assert_eq!(listed, format!("{}\n", expected.lines().find(|l| l.starts_with("second.bin")).unwrap()));

    // The limits of shares: 3 MB a file (a larger one left out and named), 3 MB x 20 in all.
    let aid = admin.ask(&cid, "```bash\nhead -c 4000000 /dev/zero > out/big.bin\n```").await;
    admin.done_after(&cid, &aid, "0").await;
    let resp = admin.request(reqwest::Method::GET, &zip_url("?path=out")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.bytes().await.unwrap();
    let listed = unzipped(&app, &bytes).await;
    let names: Vec<&str> = listed.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(names, ["SKIPPED.txt", "deep/r.bin"], "{listed}");
    let read = "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('SKIPPED.txt').decode())";
    let got = app.dir.path().join("got.zip");
    let out = tokio::process::Command::new("python3").arg("-c").arg(read).arg(&got).output().await.unwrap();
    let skipped = String::from_utf8(out.stdout).unwrap();
    assert!(skipped.contains("big.bin: larger than the 3 MB a file may be when shared"), "{skipped}");

    // One answer's files, all its runs' together.
    let query = format!("?message_id={}", second.id);
    let resp = admin.request(reqwest::Method::GET, &zip_url(&query)).send().await.unwrap();
    assert!(resp.headers()[header::CONTENT_DISPOSITION].to_str().unwrap().contains("answer"));
    let listed = unzipped(&app, &resp.bytes().await.unwrap()).await;
    assert_eq!(listed, format!("{}\n", expected.lines().find(|l| l.starts_with("second.bin")).unwrap()));

    // Bad requests, things that are not there, another person.
    assert_eq!(admin.get(&zip_url("?path=../..")).await.0, StatusCode::BAD_REQUEST);
    let missing = format!("?message_id={}&step_id=s9", second.id);
    for query in ["?path=nope", "?message_id=x&step_id=s1", "?message_id=x", &missing, "?step_id=s1"] {
        let (status, body) = admin.get(&zip_url(query)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{query}: {body}");
        assert_ne!(body["error"]["message"], "not found", "a sentence saying what is missing: {query}");
    }
    assert_eq!(bob.get(&zip_url("")).await.0, StatusCode::NOT_FOUND);

    // The next run works.
    let aid = admin.ask(&cid, "```bash\necho next\n```").await;
    assert_eq!(admin.done_after(&cid, &aid, "0").await.steps[0].output.as_ref().unwrap().stdout, "next\n");
}
