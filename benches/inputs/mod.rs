//! Answers the Markdown benchmarks render, shared by the native one (benches/markdown.rs)
//! and the one in Chromium (tests/render_speed.rs).

/// A long answer of the kind models write: headings, emphasis, code, lists, a table.
pub fn answer() -> String {
    let part = "## Results for **Q3**\n\n\
        The revenue grew by *12%* over the quarter; see [the report](https://example.org/q3 \"Q3\") and \
        `df.groupby(\"region\")` for the split. Costs stayed ~~flat~~ level.\n\n\
        1. Load the data with `pandas`\n2. Group by region:\n   - north\n   - south\n3. Plot it\n\n\
        ```python\nimport pandas as pd\ndf = pd.read_csv(\"sales.csv\")\nprint(df.groupby(\"region\").total.sum())\n```\n\n\
        | region | total | change |\n|:--|--:|:-:|\n| north | 12 | +3% |\n| south | 30 | -1% |\n\n\
        > Note: figures are *unaudited* & may change.\n\n";
    part.repeat(12)
}

/// About `bytes` of hostile Markdown: deep quotes, unmatched `*` and `[`, deep lists.
pub fn hostile(bytes: usize) -> String {
    let part = format!(
        "{}\n\n{}{}x\n\n{}",
        ">".repeat(500),
        "*".repeat(1000),
        "[".repeat(1000),
        (0..40).map(|i| format!("{}- item\n", "  ".repeat(i))).collect::<String>()
    );
    part.repeat(bytes / part.len() + 1)[..bytes].to_owned()
}

/// `bytes` of a bare address followed by closing parentheses, which once froze the page.
pub fn parens(bytes: usize) -> String {
    format!("https://a{}", ")".repeat(bytes - "https://a".len()))
}

/// About `bytes` of ordinary answer text.
pub fn prose(bytes: usize) -> String {
    answer().repeat(bytes / answer().len() + 1)[..bytes].to_owned()
}
