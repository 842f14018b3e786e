//! `--config FILE`: a subcommand's flags from a TOML file, one key per flag under its long
//! name (`max-recv = 16777216`, `allow = ["api.example.com:443", "*.example.org:443"]`,
//! `json = true`), the command line overriding the file. A key that is not one of the
//! subcommand's flags is refused, so a typo cannot leave a default silently in place.

use clap::ArgAction;
use std::ffi::OsString;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path} is not TOML: {error}")]
    Toml { path: String, error: Box<toml::de::Error> },
    #[error("{path}: unknown key `{key}` (the keys are the flags of `tlsproof {command}`: {known})")]
    UnknownKey { path: String, key: String, command: String, known: String },
    #[error("{path}: `{key}` must be a string, a number, a boolean or a list of those")]
    BadValue { path: String, key: String },
    #[error("--config needs a file name")]
    MissingPath,
}

/// The command line with the keys of the file named by `--config` inserted as flags after
/// the subcommand's name, but for the flags the command line gives itself, which win.
/// Without `--config`, `args` as they are.
pub fn expand(args: Vec<OsString>, cli: &clap::Command) -> Result<Vec<OsString>, ConfigError> {
    let Some(at) = args.iter().skip(1).position(|a| !a.to_string_lossy().starts_with('-')).map(|i| i + 1) else {
        return Ok(args);
    };
    let name = args[at].to_string_lossy().into_owned();
    let Some(command) = cli.find_subcommand(&name) else { return Ok(args) };
    let mut path = None;
    for (i, a) in args.iter().enumerate().skip(at + 1) {
        let a = a.to_string_lossy();
        if a == "--config" {
            path = Some(args.get(i + 1).ok_or(ConfigError::MissingPath)?.to_string_lossy().into_owned());
        } else if let Some(p) = a.strip_prefix("--config=") {
            path = Some(p.to_string());
        }
    }
    let Some(path) = path else { return Ok(args) };
    let text = std::fs::read_to_string(&path).map_err(|error| ConfigError::Read { path: path.clone(), error })?;
    let given: Vec<String> = args[at + 1..]
        .iter()
        .filter_map(|a| a.to_str()?.strip_prefix("--").map(|f| f.split('=').next().unwrap_or(f).to_string()))
        .collect();
    let flags = flags_of(&text, &path, command, &given)?;
    let mut out = args[..=at].to_vec();
    out.extend(flags.into_iter().map(OsString::from));
    out.extend_from_slice(&args[at + 1..]);
    Ok(out)
}

/// The file's keys as `command`'s flags, in the file's order, but for those in `given`.
fn flags_of(text: &str, path: &str, command: &clap::Command, given: &[String]) -> Result<Vec<String>, ConfigError> {
    let table: toml::Table =
        text.parse().map_err(|error| ConfigError::Toml { path: path.into(), error: Box::new(error) })?;
    let mut flags = Vec::new();
    for (key, value) in table {
        let long = key.replace('_', "-");
        let arg = command.get_arguments().find(|a| a.get_long() == Some(long.as_str()) && long != "config");
        let Some(arg) = arg else {
            let known: Vec<&str> =
                command.get_arguments().filter_map(|a| a.get_long()).filter(|l| *l != "config").collect();
            return Err(ConfigError::UnknownKey {
                path: path.into(),
                key,
                command: command.get_name().into(),
                known: known.join(", "),
            });
        };
        if given.contains(&long) {
            continue;
        }
        let bad = || ConfigError::BadValue { path: path.into(), key: key.clone() };
        let scalar = |v: &toml::Value| match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            _ => Err(bad()),
        };
        match (&value, arg.get_action()) {
            (toml::Value::Boolean(true), ArgAction::SetTrue) => flags.push(format!("--{long}")),
            (toml::Value::Boolean(false), ArgAction::SetTrue) => {}
            (toml::Value::Array(items), _) => {
                let items: Result<Vec<String>, _> = items.iter().map(scalar).collect();
                flags.push(format!("--{long}={}", items?.join(",")));
            }
            (v, _) => flags.push(format!("--{long}={}", scalar(v)?)),
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn command() -> Command {
        Command::new("tlsproof").subcommand(
            Command::new("verifier")
                .arg(Arg::new("config").long("config"))
                .arg(Arg::new("allow").long("allow").default_value(""))
                .arg(Arg::new("max-recv").long("max-recv").value_parser(clap::value_parser!(u32)).default_value("1"))
                .arg(Arg::new("json").long("json").action(ArgAction::SetTrue))
                .arg(Arg::new("log-transcripts").long("log-transcripts").action(ArgAction::SetTrue)),
        )
    }

    fn file(text: &str) -> tempfile_path::Path {
        tempfile_path::Path::with(text)
    }

    fn parsed(args: &[&str]) -> Result<clap::ArgMatches, ConfigError> {
        let args = expand(args.iter().map(OsString::from).collect(), &command())?;
        Ok(command().try_get_matches_from(args).expect("clap takes the expanded line"))
    }

    #[test]
    fn the_files_keys_are_flags_and_the_command_line_overrides_them() {
        let f = file("max-recv = 16777216\nallow = [\"a.example:443\", \"b.example:443\"]\njson = true\nlog_transcripts = false\n");
        let m = parsed(&["tlsproof", "verifier", "--config", f.name()]).unwrap();
        let v = m.subcommand_matches("verifier").unwrap();
        assert_eq!(v.get_one::<u32>("max-recv"), Some(&16777216));
        assert_eq!(v.get_one::<String>("allow").map(String::as_str), Some("a.example:443,b.example:443"));
        assert!(v.get_flag("json") && !v.get_flag("log-transcripts"));
        let m = parsed(&["tlsproof", "verifier", &format!("--config={}", f.name()), "--max-recv", "5"]).unwrap();
        assert_eq!(m.subcommand_matches("verifier").unwrap().get_one::<u32>("max-recv"), Some(&5));
    }

    #[test]
    fn an_unknown_key_a_table_or_a_missing_file_is_refused_with_its_name() {
        let typo = file("max-recieve = 1\n");
        let e = parsed(&["tlsproof", "verifier", "--config", typo.name()]).unwrap_err().to_string();
        assert!(e.contains("unknown key `max-recieve`") && e.contains("max-recv"), "{e}");
        let table = file("[allow]\nx = 1\n");
        let e = parsed(&["tlsproof", "verifier", "--config", table.name()]).unwrap_err().to_string();
        assert!(e.contains("`allow` must be"), "{e}");
        let itself = file("config = \"other.toml\"\n");
        assert!(parsed(&["tlsproof", "verifier", "--config", itself.name()]).is_err());
        let e = parsed(&["tlsproof", "verifier", "--config", "/nonexistent/verifier.toml"]).unwrap_err().to_string();
        assert!(e.starts_with("cannot read /nonexistent/verifier.toml"), "{e}");
        let e = parsed(&["tlsproof", "verifier", "--config"]).unwrap_err().to_string();
        assert_eq!(e, "--config needs a file name");
        let broken = file("max-recv = \n");
        assert!(parsed(&["tlsproof", "verifier", "--config", broken.name()])
            .unwrap_err()
            .to_string()
            .contains("is not TOML"));
    }

    /// A file in the temp directory, removed when dropped.
    mod tempfile_path {
        pub struct Path(std::path::PathBuf);
        impl Path {
            pub fn with(text: &str) -> Self {
                static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let p = std::env::temp_dir().join(format!("tlsproof-config-{}-{n}.toml", std::process::id()));
                std::fs::write(&p, text).unwrap();
                Path(p)
            }
            pub fn name(&self) -> &str {
                self.0.to_str().unwrap()
            }
        }
        impl Drop for Path {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }
}
