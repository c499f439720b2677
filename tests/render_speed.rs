//! How fast answers render in Chromium, where people read them: the cost per KB of hostile
//! Markdown (the last round's set, and a bare address followed by closing parentheses)
//! beside ordinary answer text of the same size, from 10 KB to 1 MB — pulldown-cmark under
//! Lens's rules plus the browser taking the HTML into the page. A benchmark, so ignored by
//! `cargo test`; `make bench` runs it:
//!   cargo test --release -p lens-web --target wasm32-unknown-unknown --test render_speed -- --include-ignored --nocapture
#![cfg(target_arch = "wasm32")]

#[path = "../benches/inputs/mod.rs"]
mod inputs;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Milliseconds from the page's start.
fn now() -> f64 {
    web_sys::window().unwrap().performance().unwrap().now()
}

/// Microseconds per KB to render `src` into the page: the median of rounds that each
/// render it enough times to last about 20 ms.
fn per_kb(page: &web_sys::Element, src: &str) -> f64 {
    let repeat = (200_000 / src.len()).max(1);
    let mut rounds: Vec<f64> = (0..9)
        .map(|_| {
            let start = now();
            for _ in 0..repeat {
                page.set_inner_html(&lens_web::markdown::to_html(src));
            }
            (now() - start) / repeat as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2] * 1000.0 / (src.len() as f64 / 1000.0)
}

#[wasm_bindgen_test]
#[ignore = "a benchmark: make bench runs it"]
fn hostile_answers_render_at_the_cost_of_ordinary_ones() {
    let document = web_sys::window().unwrap().document().unwrap();
    let page = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&page).unwrap();
    let say = |line: String| web_sys::console::log_1(&line.into());
    say("lens rendering in Chromium (p50 of 9; to_html and innerHTML; 2-core machine)".into());
    for (name, make) in [("hostile set", inputs::hostile as fn(usize) -> String), ("address + `)`", inputs::parens)] {
        for n in [10_000, 100_000, 1_000_000] {
            let (bad, good) = (per_kb(&page, &make(n)), per_kb(&page, &inputs::prose(n)));
            say(format!(
                "  {name:<14} {:>5} KB {:8.2} us/KB   ordinary text {:8.2} us/KB  ({:.2}x; target <= 2x)",
                n / 1000,
                bad,
                good,
                bad / good
            ));
        }
    }
}
