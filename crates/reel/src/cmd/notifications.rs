//! `--notifications count|strict|ignore`, defined once for the commands that compare
//! notification counts (`reel verify`, `reel diff`): the same flag, values and help,
//! mapped onto the one rule in `reel_mcp::notifications`.

use reel_mcp::notifications::NotificationCheck;

/// The flag's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum How {
    /// Per method and direction; a notifications/*/list_changed count is reported, not
    /// drift.
    Count,
    /// Per method, list_changed too.
    Strict,
    /// Not compared.
    Ignore,
}

/// `--notifications`, flattened into each command's arguments.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct NotificationsFlag {
    #[arg(long = "notifications", value_name = "HOW", value_enum, default_value_t = How::Count, hide_possible_values = true, help = NotificationCheck::HELP)]
    how: How,
}

impl NotificationsFlag {
    /// The rule the flag chose.
    pub fn check(self) -> NotificationCheck {
        match self.how {
            How::Count => NotificationCheck::Count,
            How::Strict => NotificationCheck::Strict,
            How::Ignore => NotificationCheck::Ignore,
        }
    }
}
