//! Groups and what each may do, through the whole server and the real local sandbox: an
//! admin's group changes what its people may run at their next run, the most permissive of
//! a person's groups wins, a refusal names the groups, admins are bound by the site alone,
//! and bad changes change nothing.

use lens_types::{AuditAction, AuditPage, MessageView, StepStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::test_app::{Client, TestApp};

async fn answer(who: &Client, cid: &str, text: &str) -> MessageView {
    let aid = who.ask(cid, text).await;
    let events = who.events(cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last().cloned() else { panic!("no done: {events:?}") };
    message
}

fn rules(sandbox: bool, network: &str, allow_hosts: bool, models: &[&str]) -> Value {
    json!({"sandbox": sandbox, "network": network, "allow_hosts": allow_hosts, "max_running": 0, "models": models})
}

async fn put_group(admin: &Client, name: &str, rules: Value, members: &[&str]) {
    let (status, body) =
        admin.put(&format!("/api/v1/admin/groups/{name}"), json!({"rules": rules, "members": members})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

const PRINT: &str = "```python\nprint(6 * 7)\n```";

#[tokio::test]
async fn a_group_decides_who_runs_code_and_a_change_reaches_their_next_run() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = bob.new_chat().await;
    assert_eq!(answer(&bob, &cid, PRINT).await.steps[0].output.as_ref().unwrap().stdout, "42\n");
    let (_, mine) = bob.get("/api/v1/me/rules").await;
    assert_eq!((mine["rules"]["sandbox"].as_bool(), mine["groups"].clone()), (Some(true), json!([])), "{mine}");

    // Everyone loses the sandbox: bob's next run is refused, and says why.
    put_group(&admin, "everyone", rules(false, "off", false, &[]), &[]).await;
    let refused = answer(&bob, &cid, PRINT).await;
    let step = &refused.steps[0];
    assert_eq!(step.status, StepStatus::Failed, "{step:?}");
    let why = step.result.as_deref().unwrap_or_default();
    assert!(why.contains("your group (everyone) may not run code in the sandbox"), "{why}");
    assert!(why.contains("Settings > Groups"), "{why}");
    let (_, mine) = bob.get("/api/v1/me/rules").await;
    assert_eq!((mine["rules"]["sandbox"].as_bool(), mine["groups"].clone()), (Some(false), json!(["everyone"])));
    // Running again by hand is refused the same way, before anything is written.
    let again = json!({"message_id": refused.id, "step_id": step.id, "code": "print(1)"});
    let (status, body) = bob.post(&format!("/api/v1/chats/{cid}/runs"), again.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("may not run code"), "{body}");
    // An admin is bound by the site's settings only.
    let theirs = admin.new_chat().await;
    assert_eq!(answer(&admin, &theirs, PRINT).await.steps[0].output.as_ref().unwrap().stdout, "42\n");

    // A group of bob's own gives it back: the most permissive group wins.
    put_group(&admin, "analysts", rules(true, "off", false, &[]), &["bob"]).await;
    assert_eq!(answer(&bob, &cid, PRINT).await.steps[0].output.as_ref().unwrap().stdout, "42\n");
    let (_, mine) = bob.get("/api/v1/me/rules").await;
    assert_eq!(
        (mine["rules"]["sandbox"].as_bool(), mine["groups"].clone()),
        (Some(true), json!(["everyone", "analysts"]))
    );
    let (status, list) = admin.get("/api/v1/admin/groups").await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<(&str, Value)> =
        list.as_array().unwrap().iter().map(|g| (g["name"].as_str().unwrap(), g["members"].clone())).collect();
    assert_eq!(names, [("analysts", json!(["bob"])), ("everyone", json!([]))]);

    // Bad changes change nothing.
    let before = admin.get("/api/v1/admin/groups").await.1;
    let unknown = json!({"rules": rules(false, "off", false, &[]), "members": ["nobody"]});
    let (status, body) = admin.put("/api/v1/admin/groups/analysts", unknown).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("no account named `nobody`"), "{body}");
    let stray = json!({"rules": {"sandbox": false, "network": "off", "allow_hosts": false, "max_running": 0, "models": [], "root": true}});
    assert_eq!(admin.put("/api/v1/admin/groups/analysts", stray).await.0, StatusCode::BAD_REQUEST);
    let wide = json!({"rules": rules(true, "everything", false, &[])});
    assert_eq!(admin.put("/api/v1/admin/groups/analysts", wide).await.0, StatusCode::BAD_REQUEST);
    let padded = json!({"rules": rules(true, "off", false, &[])});
    assert_eq!(admin.put("/api/v1/admin/groups/%20padded", padded.clone()).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(bob.put("/api/v1/admin/groups/mine", padded).await.0, StatusCode::FORBIDDEN);
    assert_eq!(bob.get("/api/v1/admin/groups").await.0, StatusCode::FORBIDDEN);
    assert_eq!(admin.delete("/api/v1/admin/groups/none-such").await.0, StatusCode::NOT_FOUND);
    assert_eq!(admin.get("/api/v1/admin/groups").await.1, before);

    // The audit trail holds each change, before and after.
    let (_, page) = admin.get("/api/v1/admin/audit?action=settings_changed").await;
    let page: AuditPage = serde_json::from_value(page).unwrap();
    let targets: Vec<&str> = page
        .entries
        .iter()
        .filter(|e| e.action == AuditAction::SettingsChanged)
        .filter_map(|e| e.target.as_deref())
        .collect();
    assert!(targets.contains(&"group everyone") && targets.contains(&"group analysts"), "{targets:?}");

    // The group deleted: bob is back to everyone's rules at his next run.
    assert_eq!(admin.delete("/api/v1/admin/groups/analysts").await.0, StatusCode::NO_CONTENT);
    let refused = answer(&bob, &cid, PRINT).await;
    assert_eq!(refused.steps[0].status, StepStatus::Failed);
    // Everyone's sandbox back: the next run in the same conversation works.
    put_group(&admin, "everyone", rules(true, "off", false, &[]), &[]).await;
    assert_eq!(answer(&bob, &cid, PRINT).await.steps[0].output.as_ref().unwrap().stdout, "42\n");
}

#[tokio::test]
async fn a_group_without_the_network_reaches_nothing_and_may_not_allow_hosts() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let port = crate::sandbox::one_page_server("a page from the network").await;
    let net = json!({"network": "hosts", "hosts": ["localhost"], "trusted_egress": ["127.0.0.0/8"], "people_allow_hosts": true});
    assert_eq!(admin.put("/api/v1/admin/sandbox", net).await.0, StatusCode::OK);
    let fetch =
        format!("```bash\ncurl -sS -m 20 -p --noproxy \"\" -x \"$HTTPS_PROXY\" http://localhost:{port}/ || true\n```");
    let cid = bob.new_chat().await;
    let reached = answer(&bob, &cid, &fetch).await;
    assert_eq!(reached.steps[0].output.as_ref().unwrap().stdout, "a page from the network");

    put_group(&admin, "everyone", rules(true, "off", false, &[]), &[]).await;
    // Without the network nothing is asked first (outside text cannot leave); refused.
    let refused = answer(&bob, &cid, &fetch).await;
    let output = refused.steps[0].output.as_ref().unwrap();
    assert!(!output.stdout.contains("a page from the network"), "{output:?}");
    let reach = &output.network[0];
    assert!(!reach.allowed && !reach.allowable, "{reach:?}");
    assert_eq!(
        reach.reason,
        "your group (everyone) may not use the network; an admin can change this in Settings > Groups"
    );
    let (status, body) = bob.post(&format!("/api/v1/chats/{cid}/sandbox/hosts"), json!({"host": "example.org"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("may not use the network"), "{body}");
    let (_, mine) = bob.get("/api/v1/me/rules").await;
    assert_eq!((mine["rules"]["network"].as_str(), mine["rules"]["allow_hosts"].as_bool()), (Some("off"), Some(false)));
    // The next run in the same conversation works, without the network.
    assert_eq!(answer(&bob, &cid, "```bash\necho next\n```").await.steps[0].output.as_ref().unwrap().stdout, "next\n");
    // The admin's own conversation still reaches it.
    let theirs = admin.new_chat().await;
    let output = answer(&admin, &theirs, &fetch).await.steps[0].output.clone().unwrap();
    assert_eq!(output.stdout, "a page from the network");

    // The network back, but not allowing hosts: the site's list is reached, no host added.
    put_group(&admin, "everyone", rules(true, "hosts", false, &[]), &[]).await;
    let (status, body) = bob.post(&format!("/api/v1/chats/{cid}/sandbox/hosts"), json!({"host": "example.org"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("may not allow hosts"), "{body}");
}

#[tokio::test]
async fn a_group_decides_which_models_its_people_use() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = bob.new_chat().await;
    put_group(&admin, "everyone", rules(true, "off", false, &["some-other-model"]), &[]).await;
    let (status, body) = bob.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": "hello"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let why = body["error"]["message"].as_str().unwrap();
    assert!(why.contains("your group (everyone) may not use the model `direct`"), "{why}");
    let (_, chat) = bob.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"], json!([]), "nothing was written");
    put_group(&admin, "everyone", rules(true, "off", false, &["direct"]), &[]).await;
    assert_eq!(answer(&bob, &cid, "hello").await.status, lens_types::MessageStatus::Complete);
}

#[tokio::test]
async fn a_group_the_provider_names_takes_its_people_from_their_sign_in() {
    use crate::single_sign_on::{Provider, browser, lens, sign_in};
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;
    // `staff` as the provider names it: no member listed in Lens.
    put_group(&admin, "staff", rules(false, "off", false, &[]), &[]).await;
    let ada = browser();
    sign_in(&app, &ada, "ada").await;
    let resp = ada.get(format!("{}/api/v1/me/rules", app.base)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let mine: Value = resp.json().await.unwrap();
    assert_eq!((mine["rules"]["sandbox"].as_bool(), mine["groups"].clone()), (Some(false), json!(["staff"])), "{mine}");
    let (_, list) = admin.get("/api/v1/admin/groups").await;
    assert_eq!(list[0]["provider_members"], json!(["ada"]), "{list}");
    assert_eq!(list[0]["members"], json!([]), "{list}");
}

#[tokio::test]
async fn a_groups_share_of_sandboxes_is_what_admission_gives_its_people() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let site = json!({"max_running": 4, "max_running_per_person": 3, "pool_size": 0, "queue_wait_secs": 120});
    assert_eq!(admin.put("/api/v1/admin/sandbox", site).await.0, StatusCode::OK);
    put_group(
        &admin,
        "everyone",
        json!({"sandbox": true, "network": "off", "allow_hosts": false, "max_running": 1, "models": []}),
        &[],
    )
    .await;
    let (_, mine) = bob.get("/api/v1/me/rules").await;
    assert_eq!(mine["rules"]["max_running"], 1, "{mine}");
    let driver = app.state.sandbox.driver().unwrap();
    let state = |cid: String| {
        let driver = driver.clone();
        async move { driver.status(&cid).await.unwrap().state }
    };
    // Bob's first conversation's sandbox stays up, idle; his second needs his one share,
    // so the first is stopped to make room (the site's share of 3 would have kept it).
    let first = bob.new_chat().await;
    assert_eq!(
        answer(&bob, &first, "```bash\necho first\n```").await.steps[0].output.as_ref().unwrap().stdout,
        "first\n"
    );
    assert_eq!(state(first.clone()).await, lens_sandbox::SandboxState::Running);
    let second = bob.new_chat().await;
    assert_eq!(
        answer(&bob, &second, "```bash\necho second\n```").await.steps[0].output.as_ref().unwrap().stdout,
        "second\n"
    );
    assert_eq!(state(first.clone()).await, lens_sandbox::SandboxState::Stopped);
    // The group gone, the site's share is his: both stay up.
    assert_eq!(admin.delete("/api/v1/admin/groups/everyone").await.0, StatusCode::NO_CONTENT);
    assert_eq!(
        answer(&bob, &first, "```bash\necho again\n```").await.steps[0].output.as_ref().unwrap().stdout,
        "again\n"
    );
    assert_eq!(state(second).await, lens_sandbox::SandboxState::Running);
    assert_eq!(state(first).await, lens_sandbox::SandboxState::Running);
}
