//! A conversation exported as a notebook: nbformat (the real package) validates it, and
//! nbclient runs it top to bottom in a fresh kernel, printing what the runs printed.

use reqwest::{StatusCode, header};

use crate::test_app::TestApp;

/// Reads the notebook at argv[1], validates it, runs it in a fresh kernel in an empty
/// folder, and prints as JSON each code cell's saved stdout and the stdout it printed now.
const CHECK: &str = r#"
import json, sys, tempfile
import nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
def stdout(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stdout")
saved = [stdout(c) for c in nb.cells if c.cell_type == "code"]
images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "display_data")
with tempfile.TemporaryDirectory() as folder:
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
ran = [stdout(c) for c in nb.cells if c.cell_type == "code"]
kinds = [c.cell_type for c in nb.cells]
print(json.dumps({"saved": saved, "ran": ran, "images": images, "kinds": kinds}))
"#;

#[tokio::test]
async fn a_conversation_exports_as_a_notebook_that_validates_and_runs_to_the_same_output() {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/notebook/bin/python");
    assert!(python.is_file(), "scripts/setup installs nbformat and nbclient into .tools/notebook");
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    for text in [
        "Keep a number.\n```python\nx = 6 * 7\nprint(x)\n```",
        "```bash\necho \"from bash\" > note.txt && cat note.txt\n```",
        "```python\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2], [2, 1])\nplt.savefig('chart.png')\nprint(x + 1, open('note.txt').read().strip())\n```",
    ] {
        let aid = admin.ask(&cid, text).await;
        let done = admin.done_after(&cid, &aid, "0").await;
        assert_eq!(done.steps[0].status, lens_types::StepStatus::Succeeded, "{done:?}");
    }

    let url = format!("/api/v1/chats/{cid}/notebook");
    let resp = admin.request(reqwest::Method::GET, &url).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/x-ipynb+json");
    assert!(resp.headers()[header::CONTENT_DISPOSITION].to_str().unwrap().starts_with("attachment; filename="));
    let bytes = resp.bytes().await.unwrap();
    let path = app.dir.path().join("export.ipynb");
    std::fs::write(&path, &bytes).unwrap();

    let out = tokio::process::Command::new(&python).arg("-c").arg(CHECK).arg(&path).output().await.unwrap();
    assert!(out.status.success(), "nbformat/nbclient: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["saved"], serde_json::json!(["42\n", "from bash\n", "43 from bash\n"]), "{report}");
    assert_eq!(report["ran"], report["saved"], "run again, the cells print what the runs printed");
    assert_eq!(report["images"], 1, "the chart is in the notebook: {report}");
    let turn = ["markdown", "code", "markdown"];
    let kinds: Vec<&str> = std::iter::once("markdown").chain(turn.into_iter().cycle().take(9)).collect();
    assert_eq!(
        report["kinds"],
        serde_json::json!(kinds),
        "the title, then each question, its run, its answer: {report}"
    );

    // Someone else's: 404.
    assert_eq!(bob.get(&url).await.0, StatusCode::NOT_FOUND);
}
