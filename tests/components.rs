//! Component tests in headless Chromium (wasm-bindgen-test-runner + chromedriver):
//!   cargo test -p lens-web --target wasm32-unknown-unknown
#![cfg(target_arch = "wasm32")]

use lens_types::{MessageStatus, MessageView as Message, Role, RunEnding, RunOutput, StepStatus, ToolStep as Step};
use lens_web::components::{message_view::MessageView, tool_step::ToolStep};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn container() -> web_sys::Element {
    let document = document();
    let el = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&el).unwrap();
    el
}

fn step(status: StepStatus) -> Step {
    Step {
        id: "s1".into(),
        tool: "run_python".into(),
        args: serde_json::json!({"code": "print('<b>hi</b>')"}),
        summary: "Run Python".into(),
        status,
        result: None,
        output: Some(RunOutput {
            language: "python".into(),
            code: "print('<b>hi</b>')".into(),
            stdout: "<b>hi</b>\n".into(),
            stderr: "Traceback: boom".into(),
            stdout_cut: false,
            stderr_cut: false,
            stdout_bytes: 10,
            stderr_bytes: 15,
            ending: RunEnding::Exited { code: 1 },
            duration_ms: 12,
            files: vec![],
            images: vec![],
            log: None,
            network: Vec::new(),
        }),
        file: None,
        approval: None,
        context: None,
        by_person: None,
    }
}

fn text(el: &web_sys::Element, selector: &str) -> String {
    el.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no {selector}")).text_content().unwrap()
}

#[wasm_bindgen_test]
fn tool_step_is_folded_worded_and_opens() {
    let el = container();
    let _h =
        leptos::mount::mount_to(el.clone().unchecked_into(), || view! { <ToolStep step=step(StepStatus::Failed) /> });
    let details: web_sys::HtmlDetailsElement = el.query_selector("details").unwrap().unwrap().unchecked_into();
    assert!(!details.open(), "folded at first");
    assert_eq!(text(&el, ".glyph"), "✕");
    assert_eq!(el.query_selector(".glyph").unwrap().unwrap().get_attribute("aria-hidden").as_deref(), Some("true"));
    assert_eq!(text(&el, ".sr-only"), "Step failed: ");
    let summary: web_sys::HtmlElement = el.query_selector("summary").unwrap().unwrap().unchecked_into();
    summary.click();
    assert!(details.open());
    // Program output is text: the <b> is shown, not rendered.
    assert_eq!(text(&el, "[data-testid=run-stdout]"), "<b>hi</b>\n");
    assert!(el.query_selector("[data-testid=run-stdout] b").unwrap().is_none());
    assert_eq!(text(&el, "[data-testid=run-stderr]"), "Traceback: boom");
    assert_eq!(text(&el, "[data-testid=run-ending]"), "exited with code 1");
}

#[wasm_bindgen_test]
async fn streaming_answer_updates_in_place() {
    let el = container();
    let message = RwSignal::new(Message {
        id: "a1".into(),
        chat_id: "c1".into(),
        role: Role::Assistant,
        text: "Hel".into(),
        steps: vec![],
        status: MessageStatus::Streaming,
        error: None,
        created_at: 0,
        attachments: Vec::new(),
        model: None,
        usage: None,
    });
    let _h = leptos::mount::mount_to(el.clone().unchecked_into(), move || view! { <MessageView message /> });
    assert!(el.query_selector("[data-testid=answer-streaming]").unwrap().is_some());
    message.update(|m| {
        m.text.push_str("lo **you**");
        m.steps.push(step(StepStatus::Running));
    });
    // The answer is rendered at the next animation frame.
    until("the new text rendered", || el.query_selector(".markdown strong").unwrap().is_some()).await;
    assert_eq!(text(&el, ".markdown strong"), "you");
    assert_eq!(text(&el, ".glyph"), "◆");
    message.update(|m| {
        m.status = MessageStatus::Stopped;
        m.steps[0].status = StepStatus::Succeeded;
    });
    leptos::task::tick().await;
    assert!(el.query_selector("[data-testid=answer-streaming]").unwrap().is_none());
    assert_eq!(text(&el, "[data-testid=answer-ending]"), "Stopped.");
    assert_eq!(text(&el, ".glyph"), "✓");
}

#[wasm_bindgen_test]
fn markdown_in_the_page_makes_no_script_image_or_script_link() {
    use lens_web::components::markdown::Markdown;
    let el = container();
    let src = "# Hi\n\n<script>window.hit = 1</script> <img src=x onerror=\"window.hit = 2\">\n\n\
               [x](javascript:window.hit=3) ![chart](https://example.org/c.png) see https://example.org/p.\n\n\
               | a | b |\n|:--|--:|\n| 1 | 2 |\n\n```python\nprint('<b>')\n```";
    let _h = leptos::mount::mount_to(el.clone().unchecked_into(), move || view! { <Markdown src=src.to_owned() /> });
    assert_eq!(text(&el, "h1"), "Hi");
    for selector in ["script", "img", "[onerror]", "[style]", "a[href^=javascript]"] {
        assert!(el.query_selector(selector).unwrap().is_none(), "no {selector} in the page");
    }
    assert!(el.text_content().unwrap().contains("<script>window.hit = 1</script>"), "raw HTML shows as text");
    for href in ["https://example.org/c.png", "https://example.org/p"] {
        let link = el.query_selector(&format!("a[href=\"{href}\"]")).unwrap();
        assert!(link.is_some(), "the image and the bare address are links: {href}");
    }
    assert_eq!(el.inner_html().matches("<a ").count(), 2, "and nothing else is: {}", el.inner_html());
    assert!(el.query_selector("td.align-right").unwrap().is_some(), "alignment is a class");
    assert_eq!(text(&el, "code.language-python"), "print('<b>')\n");
}

#[wasm_bindgen_test]
async fn a_streaming_answer_is_not_rendered_again_for_every_delta() {
    use lens_web::components::markdown::Markdown;
    let el = container();
    let src = RwSignal::new(String::from("Counting:"));
    let _h = leptos::mount::mount_to(el.clone().unchecked_into(), move || view! { <Markdown src /> });
    let shown = el.query_selector(".markdown").unwrap().unwrap();
    assert_eq!(shown.text_content().unwrap(), "Counting:\n");
    // Every replacement of the answer's HTML, as the page would see it.
    let replaced = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let count = replaced.clone();
    let renders = wasm_bindgen::closure::Closure::<dyn FnMut(js_sys::Array)>::new(move |records: js_sys::Array| {
        count.set(count.get() + records.length())
    });
    let observer = web_sys::MutationObserver::new(renders.as_ref().unchecked_ref()).unwrap();
    let options = web_sys::MutationObserverInit::new();
    options.set_child_list(true);
    observer.observe_with_options(&shown, &options).unwrap();
    // 500 deltas as a model streams them, each in its own task: each rendered the whole
    // answer again, so a long answer cost its length times its deltas.
    for i in 0..500 {
        src.update(|s| s.push_str(&format!(" **{i}**")));
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&wasm_bindgen::JsValue::NULL)).await.unwrap();
    }
    until("the whole answer shown", || shown.text_content().unwrap().ends_with(" 499\n")).await;
    let replaced = replaced.get() + observer.take_records().length();
    assert!(replaced <= 5, "the answer's HTML was replaced {replaced} times for 500 deltas");
    assert_eq!(shown.inner_html().matches("<strong>").count(), 500);
}

/// Waits (up to 10 s: the machine is busy) until `done` holds, yielding to the page.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        sleep(50).await;
    }
    panic!("waited 10 s for {what}");
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

fn path() -> String {
    web_sys::window().unwrap().location().pathname().unwrap()
}

/// The app's routes in the page: an unknown address, a link, a page that needs a login
/// (no server here, so nobody is), Back and Forward, all without reloading the page.
#[wasm_bindgen_test]
async fn routes_walk_by_address_link_back_and_forward() {
    let window = web_sys::window().unwrap();
    let history = window.history().unwrap();
    history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("/no/such/page")).unwrap();
    // A reload would lose this mark, and the test with it.
    js_sys::Reflect::set(&window, &"lensNoReload".into(), &true.into()).unwrap();
    let el = container();
    let _h = leptos::mount::mount_to(el.clone().unchecked_into(), lens_web::app::App);
    let found = |sel: &str| el.query_selector(sel).unwrap().is_some();
    until("the not-found page", || found("[data-testid=not-found]")).await;
    let link: web_sys::HtmlElement = el.query_selector("[data-testid=not-found] a").unwrap().unwrap().unchecked_into();
    assert_eq!(link.get_attribute("href").as_deref(), Some("/chat"));
    link.click();
    // The chat page needs a login; with no session the stranger lands on the login page,
    // which replaced the chat page in the history.
    until("the login page", || path() == "/login" && found(".auth-page")).await;
    assert!(!found("[data-testid=not-found]"));
    history.back().unwrap();
    until("back at the unknown address", || path() == "/no/such/page" && found("[data-testid=not-found]")).await;
    history.forward().unwrap();
    until("forward to the login page", || path() == "/login" && found(".auth-page")).await;
    let mark = js_sys::Reflect::get(&window, &"lensNoReload".into()).unwrap();
    assert_eq!(mark.as_bool(), Some(true), "the page never reloaded");
}
