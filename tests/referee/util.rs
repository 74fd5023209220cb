//! The toy world the referee scenarios run in, and the team set-up most
//! of them start from.

use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rcss3d::rules::{
    Decision, PlayMode, Referee, RobotContact, RobotFacts, RobotId, RulesConfig, Side, WorldFacts,
};

pub const DT: f32 = 0.02;
pub const R: f32 = 0.042;

/// A toy world: robots and ball stay where they are unless a test or a
/// referee decision moves them.
pub struct Sim {
    pub referee: Referee,
    pub rng: ChaCha8Rng,
    pub ball: Vector3<f32>,
    pub ball_vel: Vector3<f32>,
    pub robots: Vec<RobotFacts>,
    /// Touches of the next cycle only.
    pub touches: Vec<RobotId>,
    /// Contacts, kept until changed.
    pub contacts: Vec<RobotContact>,
    /// Connected agents; `None` = number of robots.
    pub connected: Option<usize>,
    /// Every decision so far, by cycle.
    pub log: Vec<Vec<Decision>>,
}

fn standing(id: RobotId, side: Side, unum: u8, x: f32, y: f32) -> RobotFacts {
    RobotFacts {
        id,
        side,
        unum,
        torso: Vector3::new(x, y, 0.35),
        torso_up: Vector3::z(),
        velocity: Vector3::zeros(),
        bbox_min: Vector3::new(x - 0.1, y - 0.1, 0.0),
        bbox_max: Vector3::new(x + 0.1, y + 0.1, 0.5),
    }
}

impl Sim {
    pub fn new(cfg: RulesConfig) -> Sim {
        Sim::with_seed(cfg, 7)
    }

    pub fn with_seed(cfg: RulesConfig, seed: u64) -> Sim {
        Sim {
            referee: Referee::new(cfg),
            rng: ChaCha8Rng::seed_from_u64(seed),
            ball: Vector3::new(0.0, 0.0, R),
            ball_vel: Vector3::zeros(),
            robots: Vec::new(),
            touches: Vec::new(),
            contacts: Vec::new(),
            connected: None,
            log: Vec::new(),
        }
    }

    pub fn add(&mut self, id: RobotId, side: Side, unum: u8, x: f32, y: f32) {
        self.robots.push(standing(id, side, unum, x, y));
    }

    pub fn robot(&self, id: RobotId) -> &RobotFacts {
        self.robots
            .iter()
            .find(|r| r.id == id)
            .expect("robot exists")
    }

    pub fn place(&mut self, id: RobotId, x: f32, y: f32, z: f32) {
        let r = self
            .robots
            .iter_mut()
            .find(|r| r.id == id)
            .expect("robot exists");
        let d = Vector3::new(x, y, z) - r.torso;
        r.torso += d;
        r.bbox_min += d;
        r.bbox_max += d;
    }

    pub fn contact(&mut self, a: RobotId, b: RobotId) {
        let point = (self.robot(a).torso + self.robot(b).torso) / 2.0;
        self.contacts.push(RobotContact { a, b, point });
    }

    pub fn apply(&mut self, decisions: &[Decision]) {
        for d in decisions {
            match d {
                Decision::MoveBall { pos, vel } => {
                    self.ball = *pos;
                    self.ball_vel = *vel;
                }
                Decision::MoveRobot { id, pos, .. } => {
                    self.place(*id, pos.x, pos.y, pos.z);
                    if let Some(r) = self.robots.iter_mut().find(|r| r.id == *id) {
                        r.velocity = Vector3::zeros();
                    }
                }
                Decision::SwapSides => {
                    for r in &mut self.robots {
                        r.side = r.side.opponent();
                    }
                }
                Decision::Quit => {}
            }
        }
    }

    pub fn step(&mut self) -> Vec<Decision> {
        let robots = self.robots.clone();
        let touches = std::mem::take(&mut self.touches);
        let contacts = self.contacts.clone();
        let facts = WorldFacts {
            ball: self.ball,
            ball_velocity: self.ball_vel,
            ball_touches: &touches,
            robots: &robots,
            robot_contacts: &contacts,
            self_collisions: &[],
            connected_agents: self.connected.unwrap_or(robots.len()),
            dt: DT,
        };
        let d = self.referee.step(&facts, &mut self.rng);
        self.apply(&d);
        self.log.push(d.clone());
        d
    }

    /// The facts of a still world (nothing moving or touching) with the
    /// given robots, for calling the referee directly.
    pub fn still_facts<'a>(
        &self,
        robots: &'a [RobotFacts],
        self_collisions: &'a [RobotId],
    ) -> WorldFacts<'a> {
        WorldFacts {
            ball: self.ball,
            ball_velocity: Vector3::zeros(),
            ball_touches: &[],
            robots,
            robot_contacts: &[],
            self_collisions,
            connected_agents: robots.len(),
            dt: DT,
        }
    }

    pub fn run(&mut self, cycles: usize) {
        for _ in 0..cycles {
            self.step();
        }
    }

    pub fn mode(&self) -> PlayMode {
        self.referee.play_mode()
    }

    /// Puts the game into PlayOn with the ball at (x, y), touched by `by`.
    pub fn play_on_touched(&mut self, by: RobotId, x: f32, y: f32) {
        self.referee.set_play_mode(PlayMode::PlayOn);
        self.ball = Vector3::new(x, y, R);
        self.touches = vec![by];
        self.step();
        assert_eq!(self.mode(), PlayMode::PlayOn);
    }

    pub fn fouls_of(&self, id: RobotId) -> Vec<u8> {
        let r = self.robot(id);
        self.referee
            .fouls()
            .iter()
            .filter(|f| f.side == r.side && f.unum == r.unum)
            .map(|f| f.kind)
            .collect()
    }
}

pub fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-3
}

pub fn two_teams(s: &mut Sim) {
    s.add(1, Side::Left, 1, -14.0, 0.0);
    s.add(2, Side::Left, 2, -3.0, 2.0);
    s.add(3, Side::Left, 3, -3.0, -2.0);
    s.add(11, Side::Right, 1, 14.0, 0.0);
    s.add(12, Side::Right, 2, 3.0, 2.0);
    s.add(13, Side::Right, 3, 3.0, -2.0);
}
