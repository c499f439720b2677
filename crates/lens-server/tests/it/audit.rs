//! The audit trail as an admin reads it: who signed in (and who failed, from the address
//! the trusted proxy gives), tokens, accounts and settings changed (a secret as
//! `[hidden]`), files shared and downloaded, every run with its code's SHA-256 and how it
//! ended; filtered, paged, exported as JSON Lines; for admins only; off when its days are 0.

use lens_types::{AuditAction, AuditEntry, AuditPage};
use reqwest::StatusCode;
use serde_json::json;
use sha2::Digest;

use crate::test_app::{Client, TestApp};

async fn trail(admin: &Client, query: &str) -> AuditPage {
    let (status, body) = admin.get(&format!("/api/v1/admin/audit{query}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body).unwrap()
}

fn of(page: &AuditPage, action: AuditAction) -> Vec<&AuditEntry> {
    page.entries.iter().filter(|e| e.action == action).collect()
}

#[tokio::test]
async fn sign_ins_tokens_accounts_and_settings_are_recorded_without_a_secret() {
    let app = TestApp::builder().config(|c| c.trusted_proxies = vec!["127.0.0.1".into()]).settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;

    // A failed sign-in, forwarded by the trusted proxy for 203.0.113.9.
    let stranger = app.anonymous();
    let wrong = stranger
        .request(reqwest::Method::POST, "/api/v1/auth/login")
        .header("x-forwarded-for", "203.0.113.9")
        .json(&json!({"username": "bob", "password": "not-bobs-password"}));
    assert_eq!(stranger.send(wrong).await.0, StatusCode::UNAUTHORIZED);

    let (status, made) = bob.post("/api/v1/tokens", json!({"name": "laptop", "scopes": ["chat"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["secret"].as_str().unwrap().to_owned();
    let id = made["token"]["id"].as_i64().unwrap();
    assert_eq!(bob.delete(&format!("/api/v1/tokens/{id}")).await.0, StatusCode::NO_CONTENT);

    let change = json!({"provider": "openai_compatible", "base_url": "http://127.0.0.1:9/v1", "model": "m1",
                        "api_key": "sk-very-secret-key"});
    let (status, body) = admin.put("/api/v1/settings/model", change).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(bob.post("/api/v1/auth/logout", json!({})).await.0, StatusCode::OK);
    let bob_id = app.state.store.user_by_name("bob").await.unwrap().unwrap().id;
    assert_eq!(admin.delete(&format!("/api/v1/users/{bob_id}")).await.0, StatusCode::NO_CONTENT);

    let page = trail(&admin, "").await;
    let actions: Vec<AuditAction> = page.entries.iter().rev().map(|e| e.action).collect();
    use AuditAction::*;
    assert_eq!(
        actions,
        [
            AccountMade,
            SignIn,
            AccountMade,
            SignIn,
            SignInFailed,
            TokenMade,
            TokenRevoked,
            SettingsChanged,
            SignOut,
            AccountRemoved
        ],
        "oldest first here: {:#?}",
        page.entries
    );
    let failed = of(&page, SignInFailed)[0];
    assert_eq!(failed.client.as_deref(), Some("203.0.113.9"), "the address the trusted proxy gave");
    assert_eq!((failed.target.as_deref(), failed.details["reason"].as_str()), (Some("bob"), "wrong password"));
    assert_eq!(failed.actor, None, "nobody was signed in");
    let made_bob = of(&page, AccountMade)[0];
    assert_eq!((made_bob.actor.as_deref(), made_bob.target.as_deref()), (Some("admin"), Some("bob")));
    let token = of(&page, TokenMade)[0];
    assert_eq!((token.actor.as_deref(), token.target.as_deref()), (Some("bob"), Some("laptop")));
    assert_eq!(token.details["scopes"], "chat");
    assert_eq!(of(&page, TokenRevoked)[0].details["name"], "laptop");

    let settings = of(&page, SettingsChanged)[0];
    assert_eq!(settings.actor.as_deref(), Some("admin"));
    let field = |name: &str| settings.changes.iter().find(|c| c.field == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(field("model.base_url").after.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert_eq!(field("model.name").after.as_deref(), Some("m1"));
    assert_eq!(field("model.api_key").after.as_deref(), Some("[hidden]"), "a secret is never shown");
    let removed = of(&page, AccountRemoved)[0];
    assert_eq!(removed.target.as_deref(), Some("bob"), "the entry outlives the account it names");
    assert!(of(&page, SignIn).iter().all(|e| e.client.as_deref() == Some("127.0.0.1")));

    // Neither the trail nor its export holds a secret.
    let (_, body) = admin.get("/api/v1/admin/audit").await;
    let export = admin.send(admin.request(reqwest::Method::GET, "/api/v1/admin/audit/export")).await;
    for text in [body.to_string(), export.1.to_string()] {
        for secret in ["sk-very-secret-key", secret.as_str(), "user-password", "not-bobs-password", "admin-password"] {
            assert!(!text.contains(secret), "`{secret}` in the trail");
        }
    }
}

#[tokio::test]
async fn the_trail_is_filtered_paged_and_exported_for_admins_only() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    for _ in 0..3 {
        let wrong = app.anonymous().post("/api/v1/auth/login", json!({"username": "carol", "password": "x"})).await;
        assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
    }

    let failed = trail(&admin, "?action=sign_in_failed").await;
    assert_eq!(failed.entries.len(), 3);
    assert!(failed.entries.iter().all(|e| e.details["reason"] == "no such account"));
    assert_eq!(failed.keep_days, 365);
    let bobs = trail(&admin, "?actor=BOB").await;
    assert_eq!(bobs.entries.iter().map(|e| e.action).collect::<Vec<_>>(), [AuditAction::SignIn]);

    // Pages of two, newest first, until the oldest.
    let mut seen = Vec::new();
    let mut query = "?limit=2".to_owned();
    loop {
        let page = trail(&admin, &query).await;
        assert!(page.entries.len() <= 2);
        seen.extend(page.entries.iter().map(|e| e.id));
        match page.next_before {
            Some(before) => query = format!("?limit=2&before={before}"),
            None => break,
        }
    }
    let all = trail(&admin, "").await;
    assert_eq!(seen, all.entries.iter().map(|e| e.id).collect::<Vec<_>>(), "the pages hold every entry once");
    assert_eq!(all.entries.len(), 7);

    // The export: one entry a line, the same entries, as a download.
    let resp = admin.request(reqwest::Method::GET, "/api/v1/admin/audit/export?action=sign_in_failed").send().await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/jsonl");
    assert!(resp.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"lens-audit-"));
    let text = resp.text().await.unwrap();
    let lines: Vec<AuditEntry> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines, failed.entries);

    // Not an admin: refused, as every admin page is.
    assert_eq!(bob.get("/api/v1/admin/audit").await.0, StatusCode::FORBIDDEN);
    assert_eq!(bob.get("/api/v1/admin/audit/export").await.0, StatusCode::FORBIDDEN);
    assert_eq!(app.anonymous().get("/api/v1/admin/audit").await.0, StatusCode::UNAUTHORIZED);
    // A kind of entry that does not exist, or a page too large: a sentence, not an empty list.
    let (status, body) = admin.get("/api/v1/admin/audit?action=coffee").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"].as_str().unwrap().contains("sign_in_failed"), "{body}");
    assert_eq!(admin.get("/api/v1/admin/audit?limit=501").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(admin.get("/api/v1/admin/audit/export?limit=0").await.0, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn each_run_is_recorded_once_with_its_codes_hash_and_how_it_ended_and_shares_and_downloads_too() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let python = "open('out.csv', 'w').write('a,b\\n1,2\\n')\nprint(6 * 7)";
    let aid = admin.ask(&cid, &format!("```python\n{python}\n```\n```bash\nexit 3\n```")).await;
    admin.events(&cid, &aid, None, 30_000).await;

    let page = trail(&admin, &format!("?action=run&chat_id={cid}")).await;
    assert_eq!(page.entries.len(), 2, "one entry a run, whatever the saves: {:#?}", page.entries);
    let (bash, py) = (&page.entries[0], &page.entries[1]);
    let sha = |code: &str| hex::encode(sha2::Sha256::digest(code.as_bytes()));
    assert_eq!(py.details["code_sha256"], sha(python));
    assert_eq!((py.details["language"].as_str(), py.details["ending"].as_str()), ("python", "exited normally"));
    assert_eq!(bash.details["ending"], "exited with code 3");
    assert_eq!((py.actor.as_deref(), py.chat_id.as_deref()), (Some("admin"), Some(cid.as_str())));
    assert!(!page.entries.iter().any(|e| e.details.values().any(|v| v.contains("6 * 7"))), "no code in the trail");

    let (status, file) = admin.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": "out.csv"})).await;
    assert_eq!(status, StatusCode::CREATED, "{file}");
    let fid = file["id"].as_str().unwrap();
    let shown = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{fid}?inline=true"));
    assert_eq!(admin.send(shown).await.0, StatusCode::OK);
    let got = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{fid}")).send().await.unwrap();
    assert_eq!(got.text().await.unwrap(), "a,b\n1,2\n");
    let zip = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/sandbox/zip")).send().await.unwrap();
    assert_eq!(zip.status(), StatusCode::OK);
    zip.bytes().await.unwrap();

    let page = trail(&admin, &format!("?chat_id={cid}")).await;
    let shared = of(&page, AuditAction::FileShared);
    assert_eq!(shared.len(), 1);
    assert_eq!((shared[0].target.as_deref(), shared[0].details["size"].as_str()), (Some("out.csv"), "8"));
    let downloads = of(&page, AuditAction::FileDownloaded);
    assert_eq!(downloads.len(), 1, "the download, not the file shown in the page");
    assert_eq!(downloads[0].client.as_deref(), Some("127.0.0.1"));
    assert_eq!(of(&page, AuditAction::WorkspaceDownloaded).len(), 1);

    // The next run in the conversation is recorded as well.
    let aid = admin.ask(&cid, "```bash\necho again\n```").await;
    admin.events(&cid, &aid, None, 30_000).await;
    assert_eq!(trail(&admin, &format!("?action=run&chat_id={cid}")).await.entries.len(), 3);
}

#[tokio::test]
async fn with_zero_days_the_trail_is_off() {
    let app = TestApp::builder().config(|c| c.audit_days = 0).settings_model().await;
    let admin = app.admin().await;
    app.user(&admin, "bob").await;
    let page = trail(&admin, "").await;
    assert!(page.entries.is_empty(), "{:?}", page.entries);
    assert_eq!(page.keep_days, 0);
}

#[tokio::test]
async fn an_entry_cannot_be_changed() {
    let app = TestApp::builder().on_this_disk().settings_model().await;
    app.admin().await;
    let pool = app.state.store.sqlite_pool().expect("SQLite");
    let err = sqlx::query("UPDATE audit SET actor = 'someone else'").execute(pool).await.unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    let actors: Vec<Option<String>> = sqlx::query_scalar("SELECT actor FROM audit").fetch_all(pool).await.unwrap();
    assert!(actors.iter().all(|a| a.as_deref() == Some("admin")), "{actors:?}");
}
