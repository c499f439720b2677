//! A step's input as a person reads it, shared by the folded step, its detail and the
//! approval card.

use lens_types::ToolStep as Step;

/// The input a person reads: the code for run tools, else the arguments as JSON.
pub fn input_text(step: &Step) -> String {
    for key in ["code", "command"] {
        if let Some(code) = step.args.get(key).and_then(|v| v.as_str()) {
            return code.to_owned();
        }
    }
    serde_json::to_string_pretty(&step.args).unwrap_or_default()
}
