//! How fast answers render: pulldown-cmark under Lens's safety rules against
//! pulldown-cmark alone, on the same answer, in the same run (an answer is rendered again
//! at every streamed token, so the whole stream's cost matters as much as one render);
//! and the cost per KB of hostile Markdown from 10 KB to 1 MB beside ordinary text's.
//!
//! cargo bench -p lens-web --no-default-features --features ssr --bench markdown

use std::time::{Duration, Instant};

use pulldown_cmark::{Options, Parser, html};

/// A long answer of the kind models write: headings, emphasis, code, lists, a table.
fn answer() -> String {
    let part = "## Results for **Q3**\n\n\
        The revenue grew by *12%* over the quarter; see [the report](https://example.org/q3 \"Q3\") and \
        `df.groupby(\"region\")` for the split. Costs stayed ~~flat~~ level.\n\n\
        1. Load the data with `pandas`\n2. Group by region:\n   - north\n   - south\n3. Plot it\n\n\
        ```python\nimport pandas as pd\ndf = pd.read_csv(\"sales.csv\")\nprint(df.groupby(\"region\").total.sum())\n```\n\n\
        | region | total | change |\n|:--|--:|:-:|\n| north | 12 | +3% |\n| south | 30 | -1% |\n\n\
        > Note: figures are *unaudited* & may change.\n\n";
    part.repeat(12)
}

/// pulldown-cmark with no safety rules: the baseline the rules' cost is measured on.
fn plain(src: &str) -> String {
    let mut out = String::new();
    html::push_html(&mut out, Parser::new_ext(src, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH));
    out
}

/// About `bytes` of hostile Markdown: deep quotes, unmatched `*` and `[`, deep lists.
fn hostile(bytes: usize) -> String {
    let part = format!(
        "{}\n\n{}{}x\n\n{}",
        ">".repeat(500),
        "*".repeat(1000),
        "[".repeat(1000),
        (0..40).map(|i| format!("{}- item\n", "  ".repeat(i))).collect::<String>()
    );
    part.repeat(bytes / part.len() + 1)[..bytes].to_owned()
}

/// About `bytes` of ordinary answer text.
fn prose(bytes: usize) -> String {
    answer().repeat(bytes / answer().len() + 1)[..bytes].to_owned()
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
    let hostile_us: Vec<f64> = sizes.iter().map(|&n| per_kb(&hostile(n))).collect();
    let prose_us: Vec<f64> = sizes.iter().map(|&n| per_kb(&prose(n))).collect();
    for (i, n) in sizes.iter().enumerate() {
        println!("  hostile {:>5} KB {:8.2} us/KB   ordinary text {:8.2} us/KB", n / 1000, hostile_us[i], prose_us[i]);
    }
    println!(
        "  per-KB cost, 1 MB over 10 KB: hostile {:.2}x, ordinary {:.2}x (1.00x is linear)",
        hostile_us[2] / hostile_us[0],
        prose_us[2] / prose_us[0]
    );
}
