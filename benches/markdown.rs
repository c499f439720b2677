//! How fast answers render: pulldown-cmark under Lens's safety rules against
//! pulldown-cmark alone, on the same answer, in the same run (an answer is rendered again
//! at every streamed token, so the whole stream's cost matters as much as one render);
//! and the cost per KB of hostile Markdown from 10 KB to 1 MB beside ordinary text's
//! (tests/render_speed.rs measures the same in Chromium).
//!
//! cargo bench -p lens-web --no-default-features --features ssr --bench markdown

use std::time::{Duration, Instant};

use pulldown_cmark::{Options, Parser, html};

#[path = "inputs/mod.rs"]
mod inputs;

use inputs::{answer, hostile, parens, prose};

/// pulldown-cmark with no safety rules: the baseline the rules' cost is measured on.
fn plain(src: &str) -> String {
    let mut out = String::new();
    html::push_html(&mut out, Parser::new_ext(src, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH));
    out
}

/// The median of `rounds` timings of `f`.
fn p50(rounds: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

/// Renders every prefix at word boundaries, as the page does while an answer streams.
fn stream(src: &str, render: fn(&str) -> String) -> usize {
    let mut bytes = 0;
    for (end, _) in src.match_indices(' ') {
        bytes += render(&src[..end]).len();
    }
    bytes
}

fn main() {
    let src = answer();
    let words = src.matches(' ').count();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let own = p50(201, || {
        std::hint::black_box(lens_web::markdown::to_html(std::hint::black_box(&src)));
    });
    let base = p50(201, || {
        std::hint::black_box(plain(std::hint::black_box(&src)));
    });
    println!("lens markdown figures (p50; pulldown-cmark under Lens's safety rules; 2-core machine)");
    println!(
        "  one render of a {} KB answer {:8.3} ms   pulldown-cmark alone {:8.3} ms  ({:.2}x)",
        src.len() / 1000,
        ms(own),
        ms(base),
        own.as_secs_f64() / base.as_secs_f64()
    );
    let own = p50(5, || {
        std::hint::black_box(stream(&src, lens_web::markdown::to_html));
    });
    let base = p50(5, || {
        std::hint::black_box(stream(&src, plain));
    });
    println!(
        "  whole stream ({words} renders) {:8.1} ms   pulldown-cmark alone {:8.1} ms  ({:.2}x)",
        ms(own),
        ms(base),
        own.as_secs_f64() / base.as_secs_f64()
    );
    // Linear time: the cost per KB of hostile input stays flat from 10 KB to 1 MB, as
    // ordinary text's does.
    let per_kb = |text: &str| {
        let rounds = (2_000_000 / text.len()).clamp(3, 101);
        let t = p50(rounds, || {
            std::hint::black_box(lens_web::markdown::to_html(std::hint::black_box(text)));
        });
        t.as_secs_f64() * 1e6 / (text.len() as f64 / 1000.0)
    };
    let sizes = [10_000, 100_000, 1_000_000];
    for (name, make) in [("hostile set", hostile as fn(usize) -> String), ("address + `)`", parens)] {
        for n in sizes {
            let (bad, good) = (per_kb(&make(n)), per_kb(&prose(n)));
            println!(
                "  {name:<14} {:>5} KB {:8.2} us/KB   ordinary text {:8.2} us/KB  ({:.2}x; target <= 2x)",
                n / 1000,
                bad,
                good,
                bad / good
            );
        }
    }
}
