//! Files opened in the page: a CSV's first thousand rows and its count, text, JSON,
//! Markdown and a notebook's cells, each from the vault; HTML and PDF only through a
//! signed, lapsing address on the preview origin, which serves nothing else.

use lens_types::{FilePreview, NotebookOutput, RowCount, TextSyntax};
use reqwest::{StatusCode, header};
use serde_json::json;

use crate::test_app::{Client, TestApp};

/// Python that writes the files the previews are made of.
const MAKE: &str = r##"```python
import json
with open('big.csv', 'w') as f:
    f.write('n,square,note\n')
    for i in range(1500):
        f.write(f'{i},{i * i},"line {i}, quoted"\n')
open('notes.md', 'w').write('# Notes\n\n*kept*\n')
open('data.json', 'w').write(json.dumps({"a": [1, 2]}))
open('chart.html', 'w').write('<html><body><p id="x">chart</p><script>document.title = "ran";</script></body></html>')
open('report.pdf', 'wb').write(b'%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')
open('fake.pdf', 'w').write('<script>alert(1)</script>')
nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis"]},
    {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["print(6 * 7)"],
     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]}]}
open('analysis.ipynb', 'w').write(json.dumps(nb))
open('blob.bin', 'wb').write(bytes(range(256)))
print('made')
```"##;

async fn share(client: &Client, cid: &str, path: &str) -> String {
    let (status, file) = client.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": path})).await;
    assert_eq!(status, StatusCode::CREATED, "{path}: {file}");
    file["id"].as_str().unwrap().to_owned()
}

async fn preview(client: &Client, cid: &str, fid: &str) -> FilePreview {
    let (status, body) = client.get(&format!("/api/v1/chats/{cid}/files/{fid}/preview")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).unwrap()
}

#[tokio::test]
async fn files_open_in_the_page_and_html_only_from_the_preview_origin() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, MAKE).await;
    let made = admin.done_after(&cid, &aid, "0").await;
    assert_eq!(made.steps[0].output.as_ref().unwrap().stdout, "made\n", "{made:?}");

    // A table: the header and the first thousand rows, quoted cells whole; then its count.
    let csv = share(&admin, &cid, "big.csv").await;
    let FilePreview::Table { rows, complete } = preview(&admin, &cid, &csv).await else { panic!("a table") };
    assert_eq!(rows.len(), 1_001);
    assert!(!complete);
    assert_eq!(rows[0], ["n", "square", "note"]);
    assert_eq!(rows[1_000], ["999", "998001", "line 999, quoted"]);
    let (status, count) = admin.get(&format!("/api/v1/chats/{cid}/files/{csv}/rows")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(serde_json::from_value::<RowCount>(count).unwrap().rows, 1_501);

    // Text, JSON and Markdown, as text the page colours or renders.
    let md = share(&admin, &cid, "notes.md").await;
    assert_eq!(
        preview(&admin, &cid, &md).await,
        FilePreview::Text { syntax: TextSyntax::Markdown, text: "# Notes\n\n*kept*\n".into(), cut: false }
    );
    let json = share(&admin, &cid, "data.json").await;
    assert!(matches!(preview(&admin, &cid, &json).await, FilePreview::Text { syntax: TextSyntax::Json, .. }));

    // A notebook's cells and outputs.
    let nb = share(&admin, &cid, "analysis.ipynb").await;
    let FilePreview::Notebook { cells } = preview(&admin, &cid, &nb).await else { panic!("cells") };
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[1].outputs, [NotebookOutput::Text { stream: "stdout".into(), text: "42\n".into() }]);

    // Anything else: a sentence, and its download stays.
    let bin = share(&admin, &cid, "blob.bin").await;
    assert!(matches!(preview(&admin, &cid, &bin).await, FilePreview::Unavailable { .. }));
    let (status, body) = admin.get(&format!("/api/v1/chats/{cid}/files/{bin}/rows")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // HTML: an address on the preview origin, not on Lens's; served there with no
    // session, sandboxed by its own policy; a changed address is refused.
    let html = share(&admin, &cid, "chart.html").await;
    let FilePreview::Frame { url, sandboxed } = preview(&admin, &cid, &html).await else { panic!("a frame") };
    assert!(sandboxed);
    assert!(!url.starts_with(&app.base), "another origin than Lens's: {url} vs {}", app.base);
    let plain = reqwest::Client::new();
    let resp = plain.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()[header::CONTENT_TYPE], "text/html; charset=utf-8");
    let policy = resp.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
    assert!(policy.starts_with("sandbox allow-scripts;") && !policy.contains("allow-same-origin"), "{policy}");
    assert!(policy.contains("connect-src 'none'"), "{policy}");
    assert!(resp.text().await.unwrap().contains("<p id=\"x\">chart</p>"));
    let (origin, address) = url.rsplit_once("/f/").unwrap();
    let forged = format!("{origin}/f/{}", address.replacen(&cid, "othercid", 1));
    assert_eq!(plain.get(&forged).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    // The preview origin answers nothing of Lens's.
    for path in ["/api/v1/me", "/api/v1/chats", "/", "/healthz"] {
        let status = admin.http.get(format!("{origin}{path}")).send().await.unwrap().status();
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    // Lens's own page may frame only that origin.
    let page = admin.request(reqwest::Method::GET, "/chat").send().await.unwrap();
    let lens_policy = page.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
    let port = origin.rsplit_once(':').unwrap().1;
    assert!(lens_policy.contains(&format!("frame-src *:{port};")), "{lens_policy}");

    // A PDF is framed unsandboxed (Chromium's viewer will not run in a sandbox), and only
    // if it is one.
    let pdf = share(&admin, &cid, "report.pdf").await;
    let FilePreview::Frame { url, sandboxed } = preview(&admin, &cid, &pdf).await else { panic!("a frame") };
    assert!(!sandboxed);
    let resp = plain.get(&url).send().await.unwrap();
    assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/pdf");
    assert!(resp.bytes().await.unwrap().starts_with(b"%PDF-1.4"));
    let fake = share(&admin, &cid, "fake.pdf").await;
    let FilePreview::Frame { url, .. } = preview(&admin, &cid, &fake).await else { panic!("a frame") };
    assert_eq!(plain.get(&url).send().await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Another person: 404 for the preview and the count.
    assert_eq!(bob.get(&format!("/api/v1/chats/{cid}/files/{csv}/preview")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.get(&format!("/api/v1/chats/{cid}/files/{csv}/rows")).await.0, StatusCode::NOT_FOUND);

    // The next run in the conversation works.
    let aid = admin.ask(&cid, "```bash\nwc -l < big.csv\n```").await;
    assert_eq!(admin.done_after(&cid, &aid, "0").await.steps[0].output.as_ref().unwrap().stdout, "1501\n");
}
