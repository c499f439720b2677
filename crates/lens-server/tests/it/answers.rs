//! Answers: streamed over SSE, saved exactly as streamed, replayed, stopped, failed,
//! and interrupted by a restart.

use std::{sync::Arc, time::Duration};

use lens_llm::{LlmError, ModelEvent, ScriptedTurn, ToolCall, ToolSpec};
use lens_server::tools::{OutputSink, Tool, ToolContext, ToolOutcome, ToolRegistry};
use lens_types::{ErrorCode, MessageStatus, MessageView, OutputStream, StepStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{TestApp, streamed_text};

fn done(events: &[(String, StreamEvent)]) -> MessageView {
    match events.last() {
        Some((_, StreamEvent::Done { message })) => message.clone(),
        other => panic!("the stream did not end with done: {other:?}"),
    }
}

#[tokio::test]
async fn answer_streams_and_is_saved_exactly_as_streamed() {
    let app = TestApp::answering("The answer is **42**.").await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "What is it?").await;
    let events = admin.events(&cid, &aid, None, 1000).await;
    let ids: Vec<usize> = events.iter().map(|(id, _)| id.parse().unwrap()).collect();
    assert_eq!(ids, (1..=events.len()).collect::<Vec<_>>(), "every event has an increasing id");
    assert!(events.iter().filter(|(_, e)| matches!(e, StreamEvent::Token { .. })).count() > 3, "streams in pieces");
    assert_eq!(streamed_text(&events), "The answer is **42**.");
    let message = done(&events);
    assert_eq!(message.status, MessageStatus::Complete);

    let detail: lens_types::ChatDetail =
        serde_json::from_value(admin.get(&format!("/api/v1/chats/{cid}")).await.1).unwrap();
    assert_eq!(detail.messages.len(), 2);
    assert_eq!(detail.messages[0].text, "What is it?");
    assert_eq!(detail.messages[1], message, "a reload shows what the stream showed");
}

#[tokio::test]
async fn reconnect_with_last_event_id_replays_only_what_was_missed() {
    let app = TestApp::answering("one two three four five six").await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "count").await;
    let first = admin.events(&cid, &aid, None, 2).await;
    assert_eq!(first.len(), 2);
    let rest = admin.events(&cid, &aid, Some(&first[1].0), 1000).await;
    assert_eq!(rest[0].0, "3");
    let mut all = first.clone();
    all.extend(rest);
    assert_eq!(streamed_text(&all), "one two three four five six");
    assert_eq!(done(&all).text, "one two three four five six");
}

#[tokio::test]
async fn the_answer_runs_on_without_a_connection() {
    let app = TestApp::paced("slow but sure", 30).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "go").await;
    // Nobody follows the stream; the answer is still written and saved.
    let saved = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let m = app.state.store.message(&cid, &aid).await.unwrap().unwrap();
            if m.status.is_final() {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!((saved.status, saved.text.as_str()), (MessageStatus::Complete, "slow but sure"));
    // Followed later, it still ends with the saved message.
    assert_eq!(done(&admin.events(&cid, &aid, None, 1000).await), saved);
}

#[tokio::test]
async fn stop_keeps_what_was_written() {
    let words: String = (0..200).map(|n| format!("w{n} ")).collect();
    let app = TestApp::paced(&words, 20).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "talk").await;
    let first = admin.events(&cid, &aid, None, 3).await;
    let (status, _) = admin.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let rest = admin.events(&cid, &aid, Some(&first[2].0), 1000).await;
    let message = done(&rest);
    assert_eq!(message.status, MessageStatus::Stopped);
    assert!(!message.text.is_empty() && message.text.len() < words.len(), "{}", message.text);
    let mut all = first;
    all.extend(rest);
    assert_eq!(streamed_text(&all), message.text);
    // Stopping again changes nothing; a new question is taken.
    assert_eq!(admin.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await.0, StatusCode::ACCEPTED);
    admin.ask(&cid, "again").await;
}

#[tokio::test]
async fn a_second_question_waits_for_the_running_answer() {
    let app = TestApp::paced("a b c d e f g h", 50).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    admin.ask(&cid, "one").await;
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": "two"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("conflict")));
}

/// A tool that prints its `text` argument on stdout and stderr.
struct Echo;

#[async_trait::async_trait]
impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo", "echoes", json!({"type": "object"}))
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        format!("Echo {}", args["text"].as_str().unwrap_or(""))
    }

    async fn run(&self, _ctx: ToolContext, args: serde_json::Value, live: OutputSink) -> ToolOutcome {
        let text = args["text"].as_str().unwrap_or("").to_owned();
        let _ = live.send((OutputStream::Stdout, text.clone()));
        let _ = live.send((OutputStream::Stderr, "warn".into()));
        ToolOutcome {
            ok: !text.is_empty(),
            cut: false,
            result: format!("echoed {text}"),
            output: None,
            file: None,
            network_soon: None,
        }
    }
}

#[tokio::test]
async fn tool_calls_stream_steps_and_output_and_are_saved() {
    let call = |id: &str, text: &str| {
        ModelEvent::ToolCall(ToolCall { id: id.into(), name: "echo".into(), arguments: json!({"text": text}) })
    };
    let turns = vec![
        ScriptedTurn::events(vec![ModelEvent::TextDelta("Running.".into()), call("c1", "hi"), call("c2", "")]),
        ScriptedTurn::text("All done."),
    ];
    let model = Arc::new(lens_llm::Scripted::new(turns));
    let app = TestApp::builder().model(model.clone()).tools(ToolRegistry::default().with(Arc::new(Echo))).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "echo please").await;
    let events = admin.events(&cid, &aid, None, 1000).await;
    let outputs: Vec<(String, OutputStream, String)> = events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Output { step_id, stream, text } => Some((step_id.clone(), *stream, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(outputs[0], ("s1".into(), OutputStream::Stdout, "hi".into()));
    assert_eq!(outputs[1], ("s1".into(), OutputStream::Stderr, "warn".into()));
    let message = done(&events);
    assert_eq!(message.text, "Running.\n\nAll done.");
    assert_eq!(message.steps.len(), 2);
    assert_eq!((message.steps[0].status, message.steps[0].summary.as_str()), (StepStatus::Succeeded, "Echo hi"));
    assert_eq!(message.steps[1].status, StepStatus::Failed);
    // The last `step` event of each step equals the saved step.
    for saved in &message.steps {
        let last = events.iter().rev().find_map(|(_, e)| match e {
            StreamEvent::Step { step } if step.id == saved.id => Some(step.clone()),
            _ => None,
        });
        assert_eq!(last.as_ref(), Some(saved));
    }
    // The model got both results back.
    let second = &model.requests()[1];
    assert!(
        matches!(second.messages.last(), Some(lens_llm::ChatMessage::ToolResult { content, .. }) if content == "echoed ")
    );
    assert!(second.tools.iter().any(|t| t.name == "echo"));
}

#[tokio::test]
async fn model_failure_ends_with_a_clear_error_and_keeps_the_text() {
    let app = TestApp::builder().turns(vec![ScriptedTurn::text("Partial ").failing(LlmError::StreamCut)]).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "break").await;
    let events = admin.events(&cid, &aid, None, 1000).await;
    assert!(
        events.iter().any(|(_, e)| matches!(e, StreamEvent::Error { error } if error.code == ErrorCode::ModelProtocol))
    );
    let message = done(&events);
    assert_eq!(message.status, MessageStatus::Failed);
    assert_eq!(message.text, "Partial ");
    assert!(message.error.unwrap().message.contains("stopped before"));
}

#[tokio::test]
async fn model_endpoint_that_is_down_fails_the_answer_clearly() {
    let dead = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap()
    };
    let app = TestApp::builder()
        .config(move |c| {
            c.model_provider = Some("openai_compatible".into());
            c.model_base_url = Some(format!("http://{dead}/v1"));
            c.model_name = Some("m".into());
        })
        .settings_model()
        .await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "anyone there?").await;
    let message = done(&admin.events(&cid, &aid, None, 1000).await);
    assert_eq!(message.status, MessageStatus::Failed);
    let error = message.error.unwrap();
    assert_eq!(error.code, ErrorCode::ModelUnavailable);
    assert!(error.message.contains("could not be reached"), "{}", error.message);
}

#[tokio::test]
async fn direct_mode_says_no_model_is_configured() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "hello").await;
    let message = done(&admin.events(&cid, &aid, None, 1000).await);
    assert_eq!(message.status, MessageStatus::Complete);
    assert!(message.text.starts_with("No language model is configured"), "{}", message.text);
}

#[tokio::test]
async fn restart_mid_answer_marks_it_interrupted_and_keeps_what_was_saved() {
    let words: String = (0..400).map(|n| format!("w{n} ")).collect();
    let app = TestApp::paced(&words, 5).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "long one").await;
    // Wait until some text has been saved (progress is saved about every second).
    tokio::time::timeout(Duration::from_secs(10), async {
        while app.state.store.message(&cid, &aid).await.unwrap().unwrap().text.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap();
    let saved_before = app.state.store.message(&cid, &aid).await.unwrap().unwrap().text;
    // The process "dies": a new server opens the same data directory (and database).
    // On a shared database the dead one is known by its silence (`cluster::LAPSE`, the
    // real kill is in tests/it/replicas.rs); here it is forgotten at once.
    app.state.cluster.leave().await;
    let second = lens_server::AppState::open(
        (*app.state.config).clone(),
        lens_server::model_settings::ModelSource::Settings,
        ToolRegistry::default(),
    )
    .await
    .unwrap();
    let m = second.store.message(&cid, &aid).await.unwrap().unwrap();
    assert_eq!(m.status, MessageStatus::Interrupted);
    assert!(m.text.starts_with(&saved_before), "nothing saved before is lost");
    assert_eq!(second.store.messages(&cid).await.unwrap()[0].text, "long one");
}

#[tokio::test]
async fn many_people_asking_at_once_all_get_answers() {
    // One account asks in thirty conversations at once: its limit on answers being
    // written at once is raised to let them all through.
    let app =
        TestApp::builder().turns(vec![ScriptedTurn::text("ok")]).config(|c| c.answers_per_person = 30).build().await;
    let admin = app.admin().await;
    let mut chats = Vec::new();
    for _ in 0..30 {
        chats.push(admin.new_chat().await);
    }
    let paths: Vec<String> = chats.iter().map(|cid| format!("/api/v1/chats/{cid}/messages")).collect();
    let asks = paths.iter().map(|path| admin.post(path, json!({"text": "at once"})));
    let results = futures_util::future::join_all(asks).await;
    for (status, body) in &results {
        assert_eq!(*status, StatusCode::ACCEPTED, "{body}");
    }
    for (cid, (_, body)) in chats.iter().zip(&results) {
        let message = done(&admin.events(cid, body["answer_id"].as_str().unwrap(), None, 1000).await);
        assert_eq!(message.status, MessageStatus::Complete);
    }
}

#[tokio::test]
async fn long_answers_span_several_responses_without_losing_or_repeating_events() {
    let words: String = (0..40).map(|n| format!("w{n} ")).collect();
    let app = TestApp::builder()
        .turns(vec![ScriptedTurn::text(&words).paced(Duration::from_millis(50))])
        .config(|c| c.sse_max_secs = 1)
        .build()
        .await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "long").await;
    let mut all = Vec::new();
    let mut responses = 0;
    while !matches!(all.last(), Some((_, StreamEvent::Done { .. }))) {
        let last = all.last().map(|(id, _): &(String, StreamEvent)| id.clone());
        all.extend(admin.events(&cid, &aid, last.as_deref(), 10_000).await);
        responses += 1;
        assert!(responses < 20, "the answer never ended");
    }
    assert!(responses >= 2, "a 2-second answer spans several 1-second responses");
    assert_eq!(streamed_text(&all), words);
    assert_eq!(done(&all).text, words);
}

#[tokio::test]
async fn the_next_question_reaches_the_model_with_the_earlier_calls_and_results() {
    let call =
        ModelEvent::ToolCall(ToolCall { id: "call_0".into(), name: "echo".into(), arguments: json!({"text": "a,b"}) });
    let turns = vec![
        ScriptedTurn::events(vec![ModelEvent::TextDelta("Looking.".into()), call]),
        ScriptedTurn::text("The columns are a and b."),
        ScriptedTurn::text("Plotting b."),
    ];
    let model = Arc::new(lens_llm::Scripted::new(turns));
    let app = TestApp::builder().model(model.clone()).tools(ToolRegistry::default().with(Arc::new(Echo))).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "show the columns").await;
    done(&admin.events(&cid, &aid, None, 1000).await);
    let aid = admin.ask(&cid, "now plot the second one").await;
    done(&admin.events(&cid, &aid, None, 1000).await);
    use lens_llm::ChatMessage as M;
    let third = &model.requests()[2];
    assert_eq!(
        third.messages,
        vec![
            M::User { text: "show the columns".into() },
            M::Assistant {
                text: "Looking.".into(),
                tool_calls: vec![ToolCall {
                    id: "h1_call_0".into(),
                    name: "echo".into(),
                    arguments: json!({"text": "a,b"})
                }],
            },
            M::ToolResult { call_id: "h1_call_0".into(), name: "echo".into(), content: "echoed a,b".into() },
            M::Assistant { text: "The columns are a and b.".into(), tool_calls: vec![] },
            M::User { text: "now plot the second one".into() },
        ]
    );
}

#[tokio::test]
async fn the_context_window_is_a_model_setting_checked_for_range() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let (status, body) = admin.get("/api/v1/settings/model").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["context_tokens"], 32_768);
    let (status, body) = admin.put("/api/v1/settings/model", json!({"context_tokens": 100})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("between 1024 and"), "{body}");
    let (status, body) = admin.put("/api/v1/settings/model", json!({"context_tokens": 131_072})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["context_tokens"], 131_072);
    assert_eq!(admin.get("/api/v1/settings/model").await.1["context_tokens"], 131_072);
    // Anthropic's longest answer, 4096 unless set.
    assert_eq!(body["max_output_tokens"], 4096);
    let (status, _) = admin.put("/api/v1/settings/model", json!({"max_output_tokens": 10})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = admin.put("/api/v1/settings/model", json!({"max_output_tokens": 8192})).await;
    assert_eq!((status, &body["max_output_tokens"]), (StatusCode::OK, &json!(8192)), "{body}");
}

#[tokio::test]
async fn an_answer_keeps_its_model_and_the_tokens_of_all_its_rounds() {
    let call = ModelEvent::ToolCall(ToolCall { id: "c1".into(), name: "echo".into(), arguments: json!({"text": "x"}) });
    let usage = |i, o| ModelEvent::Usage(lens_llm::Usage { input_tokens: i, output_tokens: o });
    let turns = vec![
        ScriptedTurn::events(vec![call, usage(120, 15)]),
        ScriptedTurn::events(vec![ModelEvent::TextDelta("Done.".into()), usage(160, 4)]),
        ScriptedTurn::text("No usage from this provider."),
    ];
    let model = Arc::new(lens_llm::Scripted::new(turns));
    let app = TestApp::builder().model(model).tools(ToolRegistry::default().with(Arc::new(Echo))).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "count").await;
    let message = done(&admin.events(&cid, &aid, None, 1000).await);
    assert_eq!(message.usage, Some(lens_types::TokenUsage { prompt_tokens: 280, completion_tokens: 19 }));
    assert_eq!(message.model.as_deref(), Some("scripted"));
    let aid = admin.ask(&cid, "again").await;
    let message = done(&admin.events(&cid, &aid, None, 1000).await);
    assert_eq!(message.usage, None, "absent when the provider sends none");
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][1]["usage"], json!({"prompt_tokens": 280, "completion_tokens": 19}));
    assert!(chat["messages"][3].get("usage").is_none(), "{chat}");
    // The admin sees each person's totals for the last 30 days; others may not.
    let (status, report) = admin.get("/api/v1/admin/usage").await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["days"], 30);
    assert_eq!(
        report["people"],
        json!([{"username": "admin", "answers": 1, "prompt_tokens": 280, "completion_tokens": 19}])
    );
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.get("/api/v1/admin/usage").await.0, StatusCode::FORBIDDEN);
}
