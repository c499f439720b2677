//! The store's story: what every implementation of `store::Database` must do, told once
//! and run against each: the embedded SQLite and PostgreSQL (a real server, started by
//! `scripts/postgres`). Each step is something a caller relies on: whose rows a person
//! sees, caps that hold, one answer at a time, decisions taken once.

use lens_server::store::{
    AnswerProgress, Asked, Decided, FileKind, NewAnswer, NewToken, ReplicaRow, Store, StoreError, WrittenAnswer,
};
use lens_server::store::{AuditFilter, AuditNote, NewSession};
use lens_types::{AuditAction, DocumentView, MessageStatus, SharedFileRef, TokenScope};

fn file(id: &str, size: u64) -> SharedFileRef {
    SharedFileRef { id: id.into(), name: format!("{id}.csv"), size, mime: "text/csv".into() }
}

fn note(action: AuditAction) -> AuditNote {
    AuditNote::new(action).client("192.0.2.7")
}

/// A file shared in conversation `c1`, whose owner is the actor.
fn shared(id: &str) -> AuditNote {
    note(AuditAction::FileShared).chat("c1").target(id)
}

fn ids(n: u32) -> NewAnswer {
    NewAnswer { message_id: format!("q{n}"), answer_id: format!("a{n}"), replica: "r1".into() }
}

/// Runs the whole story on an empty store.
pub async fn story(store: Store) {
    // Accounts: the first is the admin, a taken name is no second account.
    assert_eq!(store.count_users().await.unwrap(), 0);
    let ada = store.create_first_user("ada", "hash", &[]).await.unwrap().expect("the first account");
    assert!(ada.is_admin);
    assert!(store.create_first_user("eve", "hash", &[]).await.unwrap().is_none(), "only one first account");
    let bob = store
        .create_user("bob", "hash", false, &[note(AuditAction::AccountMade).target("bob")])
        .await
        .unwrap()
        .expect("a second account");
    assert!(!bob.is_admin);
    assert!(
        store
            .create_user("bob", "other", false, &[note(AuditAction::AccountMade).target("bob twice")])
            .await
            .unwrap()
            .is_none(),
        "the name is taken"
    );
    assert_eq!(store.user_by_name("bob").await.unwrap().map(|u| u.id), Some(bob.id));
    assert_eq!(store.list_users().await.unwrap().len(), 2);

    // Conversations: a person sees only their own; a cap holds.
    let chat = store.create_chat(ada.id, "c1", "First", None, 2).await.unwrap().expect("room for one");
    assert_eq!(chat.title, "First");
    store.create_chat(ada.id, "c2", "Second", Some("/library"), 2).await.unwrap().expect("room for two");
    assert!(store.create_chat(ada.id, "c3", "Third", None, 2).await.unwrap().is_none(), "the cap holds");
    assert!(store.chat(bob.id, "c1").await.unwrap().is_none(), "another person's chat is not there");
    assert_eq!(store.chat_owner("c1").await.unwrap(), Some(ada.id));
    assert_eq!(store.list_chats(ada.id, None).await.unwrap().len(), 1, "page chats are listed with their page");
    assert_eq!(store.list_chats(ada.id, Some("/library")).await.unwrap().len(), 1);
    assert!(store.rename_chat(bob.id, "c1", "Mine now").await.unwrap().is_none(), "nor renamed by them");

    // One answer at a time per conversation, and a cap per person.
    assert_eq!(store.add_question("c1", ada.id, &ids(1), "hello", &[], 1).await.unwrap(), Asked::Added);
    assert_eq!(store.add_question("c1", ada.id, &ids(2), "again", &[], 5).await.unwrap(), Asked::Busy);
    assert_eq!(store.add_question("c2", ada.id, &ids(3), "elsewhere", &[], 1).await.unwrap(), Asked::PersonBusy(1));
    let unknown = store.add_question("c2", ada.id, &ids(4), "with a file", &["nope".into()], 5).await.unwrap();
    assert_eq!(unknown, Asked::UnknownAttachment("nope".into()));
    let answer = store.message("c1", "a1").await.unwrap().expect("the answer row");
    assert_eq!(answer.status, MessageStatus::Streaming);
    let progress = AnswerProgress { text: "Hi.", steps: &[], turns: &[], model: Some("m"), usage: None };
    store.save_answer("a1", progress, MessageStatus::Complete, None, None, &[]).await.unwrap();
    let answer = store.message("c1", "a1").await.unwrap().unwrap();
    assert_eq!((answer.status, answer.text.as_str()), (MessageStatus::Complete, "Hi."));
    assert_eq!(store.messages("c1").await.unwrap().len(), 2, "the question and its answer");
    // A server that went down mid-answer leaves it interrupted: at the next start of a
    // single server, or once its replica is not heard from (and only then).
    assert_eq!(store.add_question("c1", ada.id, &ids(5), "more", &[], 1).await.unwrap(), Asked::Added);
    let now = lens_server::now_ms();
    let replica = |id: &str, seen_at| ReplicaRow {
        id: id.into(),
        host: "h".into(),
        addr: "a".into(),
        started_at: 0,
        seen_at,
        sandboxes: "{}".into(),
    };
    store.heartbeat(&replica("r1", now)).await.unwrap();
    assert_eq!(store.interrupt_orphans(now - 10_000).await.unwrap(), 0, "r1 is alive");
    assert_eq!(store.message("c1", "a5").await.unwrap().unwrap().status, MessageStatus::Streaming);
    assert_eq!(store.interrupt_orphans(now + 10_000).await.unwrap(), 1, "r1 was not heard from since");
    assert_eq!(store.message("c1", "a5").await.unwrap().unwrap().status, MessageStatus::Interrupted);

    // Replicas and leases: one holder at a time, taken over once it runs out.
    store.heartbeat(&replica("r2", now)).await.unwrap();
    let live: Vec<String> = store.live_replicas(now - 10_000).await.unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(live.len(), 2, "{live:?}");
    // Each heartbeat says what the replica's sandboxes hold now.
    let holding = r#"{"running":1,"memory":1024,"by_person":{"7":1}}"#;
    store.heartbeat(&ReplicaRow { sandboxes: holding.into(), ..replica("r2", now) }).await.unwrap();
    let said: Vec<String> = store.live_replicas(now - 10_000).await.unwrap().into_iter().map(|r| r.sandboxes).collect();
    assert_eq!(said, ["{}", holding]);
    assert!(store.take_lease("routines", "r1", now + 60_000).await.unwrap());
    assert!(store.take_lease("routines", "r1", now + 90_000).await.unwrap(), "kept by its holder");
    assert!(!store.take_lease("routines", "r2", now + 60_000).await.unwrap(), "held by r1");
    assert!(store.take_lease("idle", "r2", now - 1).await.unwrap(), "another lease is apart");
    assert!(store.take_lease("idle", "r1", now + 60_000).await.unwrap(), "an expired lease is taken over");
    store.forget_replica("r1").await.unwrap();
    assert!(store.take_lease("routines", "r2", now + 60_000).await.unwrap(), "a replica leaving frees its leases");
    assert_eq!(store.live_replicas(0).await.unwrap().len(), 1);

    // Open event streams: one cap per person across replicas; a replica not heard from
    // no longer counts (its own count always does).
    store.heartbeat(&replica("r4", now)).await.unwrap();
    let since = now - 10_000;
    assert!(store.open_stream("r2", ada.id, 2, since).await.unwrap());
    assert!(store.open_stream("r4", ada.id, 2, since).await.unwrap(), "a second, on another replica");
    assert!(!store.open_stream("r2", ada.id, 2, since).await.unwrap(), "the cap holds across replicas");
    assert!(store.open_stream("r4", bob.id, 2, since).await.unwrap(), "another person is apart");
    store.close_stream("r4", ada.id).await.unwrap();
    assert!(store.open_stream("r2", ada.id, 2, since).await.unwrap(), "a closed one frees its place");
    assert!(!store.open_stream("r4", ada.id, 2, since).await.unwrap());
    let later = lens_server::now_ms() + 1;
    assert!(store.open_stream("r4", ada.id, 2, later).await.unwrap(), "r2, not seen since, no longer counts");
    assert!(store.forget_open_streams(later).await.unwrap() >= 2, "the counts of replicas gone are forgotten");

    // Approvals: decided once, by their conversation's owner only.
    store.insert_approval("p1", "c1", "a5", "s1", "Run it?").await.unwrap();
    assert_eq!(store.decide_approval(bob.id, "p1", true, &[]).await.unwrap(), Decided::NotFound);
    assert_eq!(
        store.decide_approval(ada.id, "p1", true, &[note(AuditAction::ApprovalDecided).target("p1")]).await.unwrap(),
        Decided::Recorded
    );
    assert_eq!(
        store
            .decide_approval(ada.id, "p1", false, &[note(AuditAction::ApprovalDecided).target("p1 again")])
            .await
            .unwrap(),
        Decided::AlreadyDecided
    );

    // Files a conversation keeps: the cap counts every kind.
    assert!(store.insert_chat_file("c1", &file("f1", 10), FileKind::Shared, 2, &[shared("f1")]).await.unwrap());
    assert!(store.insert_chat_file("c1", &file("f2", 10), FileKind::Image, 2, &[]).await.unwrap());
    assert!(
        !store.insert_chat_file("c1", &file("f3", 10), FileKind::Log, 2, &[shared("f3")]).await.unwrap(),
        "the cap holds"
    );
    assert_eq!(store.count_kept_files("c1").await.unwrap(), 2);
    assert_eq!(store.chat_file("c1", "f1").await.unwrap().map(|f| f.size), Some(10));
    assert!(store.chat_file("c2", "f1").await.unwrap().is_none(), "a file belongs to its conversation");

    // Uploads: a count and a byte cap per person.
    assert!(store.insert_upload(ada.id, &file("u1", 60), (5, 100)).await.unwrap());
    assert!(!store.insert_upload(ada.id, &file("u2", 60), (5, 100)).await.unwrap(), "over the bytes");
    assert_eq!(store.uploads_held(ada.id).await.unwrap(), (1, 60));

    // The library: a name once per person (a rename onto it is a conflict), a cap on documents.
    store.create_namespace(ada.id, "n1", "Notes").await.unwrap().expect("made");
    store.create_namespace(ada.id, "n2", "Drafts").await.unwrap().expect("made");
    assert!(store.create_namespace(ada.id, "n3", "Notes").await.unwrap().is_none(), "the name is taken");
    let renamed = store.rename_namespace(ada.id, "n2", "Notes").await;
    assert!(matches!(renamed, Err(StoreError::Conflict(_))), "{renamed:?}");
    assert!(store.namespace(bob.id, "n1").await.unwrap().is_none());
    let doc = |id: &str| DocumentView {
        id: id.into(),
        namespace_id: "n1".into(),
        name: format!("{id}.md"),
        size: 3,
        mime: "text/plain".into(),
        created_at: 0,
    };
    assert!(store.insert_document(&doc("d1"), 1).await.unwrap());
    assert!(!store.insert_document(&doc("d2"), 1).await.unwrap(), "the cap holds");
    assert!(store.document(bob.id, "d1").await.unwrap().is_none());

    // Tokens and sessions find their person; an expired session does not.
    let scopes = [TokenScope::Chat];
    let token = NewToken { user_id: bob.id, name: "agent", token_hash: "th", scopes: &scopes, expires_at: None };
    store.create_token(token, 5, &[]).await.unwrap().expect("made");
    let (user, found) = store.token_user("th").await.unwrap().expect("the token's person");
    assert_eq!((user.id, found), (bob.id, scopes.to_vec()));
    let session =
        |token_hash, expires_at| NewSession { user_id: ada.id, token_hash, csrf: "csrf", expires_at, id_token: None };
    store.create_session(session("sh", lens_server::now_ms() + 60_000), &[]).await.unwrap();
    store.create_session(session("old", lens_server::now_ms() - 1), &[]).await.unwrap();
    assert_eq!(store.session_user("sh").await.unwrap().map(|(u, csrf)| (u.id, csrf)), Some((ada.id, "csrf".into())));
    assert!(store.session_user("old").await.unwrap().is_none());
    assert_eq!(store.delete_expired_sessions().await.unwrap(), 1);

    // Settings: written together, read back, and removed by `None`.
    store.set_settings(&[("a", Some("1".into())), ("b", Some("2".into()))], &[]).await.unwrap();
    store.set_settings(&[("b", None)], &[]).await.unwrap();
    assert_eq!(store.setting("a").await.unwrap().as_deref(), Some("1"));
    assert_eq!(store.setting("b").await.unwrap(), None);

    // An answer given to another replica to write is found by that replica alone.
    let given = NewAnswer { message_id: "q6".into(), answer_id: "a6".into(), replica: "r3".into() };
    assert_eq!(store.add_question("c2", ada.id, &given, "over there", &[], 5).await.unwrap(), Asked::Added);
    let written = WrittenAnswer { answer_id: "a6".into(), chat_id: "c2".into(), user_id: ada.id };
    assert_eq!(store.answers_written_by("r3").await.unwrap(), vec![written]);
    assert!(store.answers_written_by("r2").await.unwrap().is_empty());

    // A conversation's sandbox lease: let go, it is free at once and still names its last
    // holder; a holder lets go of its own lease only.
    let later = lens_server::now_ms() + 60_000;
    assert!(store.take_lease("sandbox:c1", "r2", later).await.unwrap());
    assert!(!store.take_lease("sandbox:c1", "r3", later).await.unwrap(), "held by r2");
    store.release_lease("sandbox:c1", "r3").await.unwrap();
    assert!(!store.take_lease("sandbox:c1", "r3", later).await.unwrap(), "r3 cannot let go of r2's");
    store.release_lease("sandbox:c1", "r2").await.unwrap();
    let last = store.lease("sandbox:c1").await.unwrap().expect("kept after it is let go");
    assert_eq!(last.holder, "r2");
    assert!(last.expires_at < lens_server::now_ms() + 1, "{last:?}");
    assert!(store.take_lease("sandbox:c1", "r3", later).await.unwrap(), "free once let go");
    assert!(store.take_lease("sandbox:gone", "r3", later).await.unwrap());
    let names: Vec<String> = store.leases("sandbox:").await.unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["sandbox:c1", "sandbox:gone"]);
    assert_eq!(store.lease("nobody").await.unwrap(), None);

    // Deleting a conversation takes its rows; deleting a person takes theirs.
    assert!(!store.delete_chat(bob.id, "c1").await.unwrap(), "not another person's");
    assert!(store.delete_chat(ada.id, "c1").await.unwrap());
    assert_eq!(store.forget_stale_leases().await.unwrap(), 2, "the leases of conversations that are gone");
    assert!(store.leases("sandbox:").await.unwrap().is_empty());
    assert!(store.message("c1", "a1").await.unwrap().is_none());
    assert!(!store.chat_exists("c1").await.unwrap());
    store.delete_user(bob.id, &[note(AuditAction::AccountRemoved).actor(ada.id, None).target("bob")]).await.unwrap();
    assert!(store.token_user("th").await.unwrap().is_none(), "a person's tokens go with them");
    audit_story(&store, ada.id).await;
}

/// The audit trail: entries written with their change (and only then), outliving the
/// account they name; written once per key; read newest first, filtered and paged; pruned.
async fn audit_story(store: &Store, ada: i64) {
    let all = AuditFilter { limit: 100, ..AuditFilter::default() };
    let trail = store.audit_entries(&all).await.unwrap();
    let targets: Vec<_> = trail.iter().map(|e| e.target.clone().unwrap_or_default()).collect();
    assert_eq!(targets, ["bob", "f1", "p1", "bob"], "newest first, and nothing of the refused changes");
    let shared = &trail[1];
    assert_eq!((shared.actor_id, shared.actor.as_deref()), (Some(ada), Some("ada")), "the chat's owner is the actor");
    assert_eq!(shared.chat_id.as_deref(), Some("c1"));
    assert_eq!(shared.client.as_deref(), Some("192.0.2.7"));
    assert_eq!(trail[3].action, AuditAction::AccountMade);
    assert_eq!(trail[0].actor.as_deref(), Some("ada"), "the actor's name is filled from the account");

    // A run's entry written with every save of its answer stays one entry.
    let run =
        || note(AuditAction::Run).actor(ada, None).chat("c1").detail("code_sha256", "ab").once("run:a1:s1".into());
    store.append_audit(&[run()]).await.unwrap();
    store.append_audit(&[run(), run()]).await.unwrap();
    let runs = AuditFilter { action: Some(AuditAction::Run), limit: 100, ..AuditFilter::default() };
    let found = store.audit_entries(&runs).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].details.get("code_sha256").map(String::as_str), Some("ab"));

    // Filters: by actor whatever the case, by conversation, by time, and pages by id.
    let by_ada = AuditFilter { actor: Some("ADA".into()), limit: 100, ..AuditFilter::default() };
    assert_eq!(store.audit_entries(&by_ada).await.unwrap().len(), 3);
    let in_c1 = AuditFilter { chat_id: Some("c1".into()), limit: 100, ..AuditFilter::default() };
    assert_eq!(store.audit_entries(&in_c1).await.unwrap().len(), 2);
    let first_page = store.audit_entries(&AuditFilter { limit: 2, ..AuditFilter::default() }).await.unwrap();
    assert_eq!(first_page.len(), 2);
    let before = Some(first_page[1].id);
    let next_page = store.audit_entries(&AuditFilter { before, limit: 100, ..AuditFilter::default() }).await.unwrap();
    assert_eq!(next_page.len(), 3, "the rest, older");
    assert!(next_page.iter().all(|e| e.id < first_page[1].id));
    let future = AuditFilter { since: Some(lens_server::now_ms() + 60_000), limit: 100, ..AuditFilter::default() };
    assert!(store.audit_entries(&future).await.unwrap().is_empty());

    // The retention removes what is older than its days, and nothing newer.
    let mut old = note(AuditAction::SignIn).target("long ago");
    old.at = lens_server::now_ms() - 400 * 86_400_000;
    store.append_audit(&[old]).await.unwrap();
    assert_eq!(store.prune_audit(lens_server::now_ms() - 365 * 86_400_000).await.unwrap(), 1);
    assert_eq!(store.audit_entries(&all).await.unwrap().len(), 5);
}

/// Writers side by side, as several requests (or replicas) are: each cap and each
/// "once" holds whoever gets there first.
pub async fn races(store: Store) {
    use futures_util::future::join_all;
    let firsts = join_all((0..6).map(|n| {
        let store = store.clone();
        async move { store.create_first_user(&format!("first{n}"), "hash", &[]).await.unwrap() }
    }))
    .await;
    assert_eq!(firsts.iter().flatten().count(), 1, "one first account");
    let ada = firsts.into_iter().flatten().next().unwrap();

    let chats = join_all((0..12).map(|n| {
        let store = store.clone();
        async move { store.create_chat(ada.id, &format!("c{n}"), "Chat", None, 4).await.unwrap() }
    }))
    .await;
    let made: Vec<_> = chats.into_iter().flatten().collect();
    assert_eq!(made.len(), 4, "the conversation cap holds");

    let asked = join_all(made.iter().enumerate().map(|(n, chat)| {
        let store = store.clone();
        async move { store.add_question(&chat.id, ada.id, &ids(n as u32), "hi", &[], 2).await.unwrap() }
    }))
    .await;
    assert_eq!(asked.iter().filter(|a| **a == Asked::Added).count(), 2, "{asked:?}");
    assert!(asked.iter().all(|a| matches!(a, Asked::Added | Asked::PersonBusy(_))), "{asked:?}");
    let busy = join_all((10..14).map(|n| {
        let store = store.clone();
        let chat = made[0].id.clone();
        async move { store.add_question(&chat, ada.id, &ids(n), "again", &[], 9).await.unwrap() }
    }))
    .await;
    let added = busy.iter().filter(|a| **a == Asked::Added).count();
    assert!(added <= 1, "one answer at a time in a conversation: {busy:?}");

    let uploads = join_all((0..8).map(|n| {
        let store = store.clone();
        async move { store.insert_upload(ada.id, &file(&format!("u{n}"), 30), (100, 100)).await.unwrap() }
    }))
    .await;
    assert_eq!(uploads.iter().filter(|ok| **ok).count(), 3, "the byte cap holds");

    store.insert_approval("p1", &made[0].id, "a0", "s1", "Run it?").await.unwrap();
    let decided = join_all((0..6).map(|n| {
        let store = store.clone();
        async move {
            store
                .decide_approval(ada.id, "p1", n % 2 == 0, &[note(AuditAction::ApprovalDecided).target("p1")])
                .await
                .unwrap()
        }
    }))
    .await;
    assert_eq!(decided.iter().filter(|d| **d == Decided::Recorded).count(), 1, "decided once: {decided:?}");
    let decisions = AuditFilter { action: Some(AuditAction::ApprovalDecided), limit: 100, ..AuditFilter::default() };
    assert_eq!(store.audit_entries(&decisions).await.unwrap().len(), 1, "one decision, one entry");

    let until = lens_server::now_ms() + 60_000;
    let leases = join_all((0..8).map(|n| {
        let store = store.clone();
        async move { store.take_lease("routines", &format!("r{n}"), until).await.unwrap() }
    }))
    .await;
    assert_eq!(leases.iter().filter(|held| **held).count(), 1, "one holder: {leases:?}");

    // Login attempts arriving together are each counted once.
    let now = lens_server::now_ms();
    let counted = join_all((0..10).map(|_| {
        let store = store.clone();
        async move { store.count_login(&["a:1.2.3.4"], now, now - 300_000).await.unwrap()[0].0 }
    }))
    .await;
    let mut counted = counted;
    counted.sort();
    assert_eq!(counted, (1..=10).collect::<Vec<i64>>());
    store.login_succeeded("p:x", &["a:1.2.3.4"]).await.unwrap();
    assert_eq!(store.count_login(&["a:1.2.3.4"], now, now - 300_000).await.unwrap(), [(10, now)]);
    // A window that began before the one counted now starts again.
    assert_eq!(store.count_login(&["a:1.2.3.4"], now + 1, now + 1).await.unwrap(), [(1, now + 1)]);
}

#[tokio::test]
async fn the_sqlite_store_tells_the_story() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("lens.db")).await.unwrap();
    story(store).await;
    races(Store::open(&dir.path().join("races.db")).await.unwrap()).await;
}

#[tokio::test]
async fn the_postgres_store_tells_the_story() {
    let Some(url) = crate::postgres::fresh_database().await else { return };
    story(Store::connect(&url).await.unwrap()).await;
    let Some(url) = crate::postgres::fresh_database().await else { return };
    races(Store::connect(&url).await.unwrap()).await;
}

#[tokio::test]
async fn postgres_refuses_to_change_an_audit_entry() {
    use sqlx::Connection;
    let Some(url) = crate::postgres::fresh_database().await else { return };
    let store = Store::connect(&url).await.unwrap();
    store.append_audit(&[note(AuditAction::SignIn).target("ada")]).await.unwrap();
    let mut raw = sqlx::PgConnection::connect(&url).await.unwrap();
    let err = sqlx::query("UPDATE audit SET target = 'eve'").execute(&mut raw).await.unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    let all = AuditFilter { limit: 10, ..AuditFilter::default() };
    assert_eq!(store.audit_entries(&all).await.unwrap()[0].target.as_deref(), Some("ada"));
}
