//! The sandbox's numeric options (`--sandbox-<name>`, `LENS_SANDBOX_<NAME>`), made from
//! lens-types' declaration of the numbers, so each is named in one place.

use std::collections::BTreeMap;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches, value_parser};
use lens_types::SandboxNumber;

/// The numbers the operator set; each locks its field in the admin's page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxNumbers(BTreeMap<SandboxNumber, u64>);

impl SandboxNumbers {
    pub fn get(&self, number: SandboxNumber) -> Option<u64> {
        self.0.get(&number).copied()
    }

    pub fn set(&mut self, number: SandboxNumber, value: u64) {
        self.0.insert(number, value);
    }
}

/// The option's id: the field's name, kept apart from every other option's.
fn id(number: SandboxNumber) -> String {
    format!("sandbox_{}", number.spec().name)
}

impl Args for SandboxNumbers {
    fn augment_args(cmd: Command) -> Command {
        SandboxNumber::ALL.into_iter().fold(cmd, |cmd, number| {
            let spec = number.spec();
            let automatic = if spec.zero_is_automatic { "; 0 = from the host" } else { "" };
            cmd.arg(
                Arg::new(id(number))
                    .long(format!("sandbox-{}", spec.name.replace('_', "-")))
                    .env(spec.env)
                    .value_parser(value_parser!(u64))
                    .help(format!("{}: {}{automatic} [default {}]", spec.label, spec.unit, spec.default)),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SandboxNumbers {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut numbers = Self::default();
        numbers.update_from_arg_matches(matches)?;
        Ok(numbers)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for number in SandboxNumber::ALL {
            if let Some(value) = matches.get_one::<u64>(&id(number)) {
                self.set(number, *value);
            }
        }
        Ok(())
    }
}
