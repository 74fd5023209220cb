//! Play modes and team sides, with their exact protocol names and numbers.

use std::fmt;

/// The side a team plays on. The first team to `init` plays left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The team whose own goal is at x = -15.
    Left,
    /// The team whose own goal is at x = +15.
    Right,
}

impl Side {
    /// The other side.
    pub fn opponent(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    /// Lowercase name as sent to agents in `GS (team ...)`.
    pub fn agent_name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }

    /// Capitalised name used by monitor commands (`Left` / `Right`).
    pub fn monitor_name(self) -> &'static str {
        match self {
            Side::Left => "Left",
            Side::Right => "Right",
        }
    }

    /// Team index used by monitors in `foul` predicates: 1 = left, 2 = right.
    pub fn monitor_index(self) -> u8 {
        match self {
            Side::Left => 1,
            Side::Right => 2,
        }
    }

    /// +1 for the left team, -1 for the right team: the sign that converts a
    /// team-frame x or y into the field frame.
    pub fn sign(self) -> f32 {
        match self {
            Side::Left => 1.0,
            Side::Right => -1.0,
        }
    }
}

/// The 19 play modes of rcssserver3d 0.7.1, numbered as in the monitor
/// protocol (the `play_modes` list and `(play_mode N)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum PlayMode {
    BeforeKickOff = 0,
    KickOffLeft = 1,
    KickOffRight = 2,
    PlayOn = 3,
    KickInLeft = 4,
    KickInRight = 5,
    CornerKickLeft = 6,
    CornerKickRight = 7,
    GoalKickLeft = 8,
    GoalKickRight = 9,
    OffsideLeft = 10,
    OffsideRight = 11,
    GameOver = 12,
    GoalLeft = 13,
    GoalRight = 14,
    FreeKickLeft = 15,
    FreeKickRight = 16,
    DirectFreeKickLeft = 17,
    DirectFreeKickRight = 18,
}

impl PlayMode {
    /// Every play mode in protocol order (index = monitor number).
    pub const ALL: [PlayMode; 19] = [
        PlayMode::BeforeKickOff,
        PlayMode::KickOffLeft,
        PlayMode::KickOffRight,
        PlayMode::PlayOn,
        PlayMode::KickInLeft,
        PlayMode::KickInRight,
        PlayMode::CornerKickLeft,
        PlayMode::CornerKickRight,
        PlayMode::GoalKickLeft,
        PlayMode::GoalKickRight,
        PlayMode::OffsideLeft,
        PlayMode::OffsideRight,
        PlayMode::GameOver,
        PlayMode::GoalLeft,
        PlayMode::GoalRight,
        PlayMode::FreeKickLeft,
        PlayMode::FreeKickRight,
        PlayMode::DirectFreeKickLeft,
        PlayMode::DirectFreeKickRight,
    ];

    /// The exact name sent to agents (`GS (pm ...)`) and listed to monitors.
    pub fn name(self) -> &'static str {
        match self {
            PlayMode::BeforeKickOff => "BeforeKickOff",
            PlayMode::KickOffLeft => "KickOff_Left",
            PlayMode::KickOffRight => "KickOff_Right",
            PlayMode::PlayOn => "PlayOn",
            PlayMode::KickInLeft => "KickIn_Left",
            PlayMode::KickInRight => "KickIn_Right",
            PlayMode::CornerKickLeft => "corner_kick_left",
            PlayMode::CornerKickRight => "corner_kick_right",
            PlayMode::GoalKickLeft => "goal_kick_left",
            PlayMode::GoalKickRight => "goal_kick_right",
            PlayMode::OffsideLeft => "offside_left",
            PlayMode::OffsideRight => "offside_right",
            PlayMode::GameOver => "GameOver",
            PlayMode::GoalLeft => "Goal_Left",
            PlayMode::GoalRight => "Goal_Right",
            PlayMode::FreeKickLeft => "free_kick_left",
            PlayMode::FreeKickRight => "free_kick_right",
            PlayMode::DirectFreeKickLeft => "direct_free_kick_left",
            PlayMode::DirectFreeKickRight => "direct_free_kick_right",
        }
    }

    /// The monitor protocol number of this mode.
    pub fn index(self) -> u8 {
        self as u8
    }

    /// Looks a mode up by its exact (case-sensitive) name.
    pub fn from_name(name: &str) -> Option<PlayMode> {
        PlayMode::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Looks a mode up by its monitor number.
    pub fn from_index(index: usize) -> Option<PlayMode> {
        PlayMode::ALL.get(index).copied()
    }

    /// Whether `beam` is effective in this mode.
    pub fn beam_allowed(self) -> bool {
        matches!(
            self,
            PlayMode::BeforeKickOff | PlayMode::GoalLeft | PlayMode::GoalRight
        )
    }

    /// Whether the game clock advances in this mode.
    pub fn clock_runs(self) -> bool {
        !matches!(self, PlayMode::BeforeKickOff | PlayMode::GameOver)
    }
}

impl fmt::Display for PlayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_indices_are_protocol_order() {
        for (i, mode) in PlayMode::ALL.iter().enumerate() {
            assert_eq!(mode.index() as usize, i);
            assert_eq!(PlayMode::from_name(mode.name()), Some(*mode));
            assert_eq!(PlayMode::from_index(i), Some(*mode));
        }
        assert_eq!(PlayMode::from_name("playon"), None);
        assert_eq!(PlayMode::from_index(19), None);
        assert_eq!(PlayMode::GoalRight.index(), 14);
        assert_eq!(
            PlayMode::DirectFreeKickRight.name(),
            "direct_free_kick_right"
        );
    }
}
