//! `tritontui ranks`'s human summary.

use super::findings::{RankCheck, RankValue};

/// The human summary of `tritontui ranks`.
pub fn summary(check: &RankCheck) -> String {
    let groups = check.groups.len();
    let mut out = format!(
        "{}  {} ranks, {} collective calls on {groups} process group{}; the results of {} collectives compared across their members",
        check.run,
        check.ranks.len(),
        check.collectives,
        if groups == 1 { "" } else { "s" },
        check.results_compared,
    );
    if check.results_unhashed > 0 {
        out += &format!(" ({} more not hashed)", check.results_unhashed);
    }
    if check.pieces_compared > 0 {
        out += &format!(
            "; {} all-gather{} or all-to-all{} of tensor lists checked piece by piece",
            check.pieces_compared,
            if check.pieces_compared == 1 { "" } else { "s" },
            if check.pieces_compared == 1 { "" } else { "s" },
        );
    }
    if check.messages > 0 {
        out += &format!(
            "; {} point-to-point transfer{}, {} compared from send to receive",
            check.messages,
            if check.messages == 1 { "" } else { "s" },
            check.messages_compared
        );
    }
    out.push('\n');
    for group in &check.groups {
        out += &format!(
            "  process group {}{}: rank{} {}, {}\n",
            group.name,
            group
                .backend
                .as_deref()
                .map_or(String::new(), |b| format!(" ({b})")),
            if group.members.len() == 1 { "" } else { "s" },
            rank_ranges(&group.members),
            match group.collectives {
                0 => "no collective".to_owned(),
                1 => "1 collective".to_owned(),
                n => format!("{n} collectives"),
            },
        );
    }
    for (title, finding) in [
        (
            [
                "first collective the ranks ran differently",
                "first transfer whose ends differ",
            ],
            &check.first_sequence_mismatch,
        ),
        (
            [
                "first collective whose results differ across ranks",
                "first transfer received other than it was sent",
            ],
            &check.first_result_mismatch,
        ),
    ] {
        let Some(f) = finding else {
            continue;
        };
        let title = title[usize::from(f.op == "c10d::send")];
        out += &format!(
            "\n{title}: {} #{} on process group {}: {}\n",
            f.op,
            f.index,
            f.group,
            what_differs(&f.what)
        );
        // Members with the same value on one line: a run has many ranks.
        let mut values: Vec<(&str, Vec<&RankValue>)> = Vec::new();
        for r in &f.ranks {
            match values.iter_mut().find(|(v, _)| *v == r.value) {
                Some((_, members)) => members.push(r),
                None => values.push((&r.value, vec![r])),
            }
        }
        for (value, members) in values {
            let ranks: Vec<u32> = members.iter().map(|r| r.rank).collect();
            let mut launches: Vec<String> = members
                .iter()
                .filter_map(|r| r.launch.map(|seq| format!("#{seq}")))
                .collect();
            launches.dedup();
            let launches = match launches.as_slice() {
                [] => "no launch".to_owned(),
                [one] => format!("launch {one}"),
                _ => "launches differ".to_owned(),
            };
            out += &format!(
                "  {value}  on rank{} {} ({launches})\n",
                if ranks.len() == 1 { "" } else { "s" },
                rank_ranges(&ranks)
            );
        }
    }
    out += if !check.agree() {
        "\nthe ranks disagree\n"
    } else if check.messages > 0 {
        "\nthe ranks agree: the same collectives in the same order, the same results where they must be, \
         every transfer received as it was sent\n"
    } else {
        "\nthe ranks agree: the same collectives in the same order, the same results where they must be\n"
    };
    out
}

/// Sorted ranks as ranges: `0-2,5`.
fn rank_ranges(ranks: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A finding's `what` in words.
fn what_differs(what: &str) -> String {
    match what {
        "missing" => {
            "a member never ran it (a desynchronised rank, or one whose trace ends early)".into()
        }
        "results" => {
            "its members hold different bytes after it, where they must hold the same".into()
        }
        "pieces" => "a member got a piece other than the member it came from put in".into(),
        other => format!("the {other} differs between members"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_ranges_fold_consecutive_ranks() {
        assert_eq!(rank_ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(rank_ranges(&[3]), "3");
    }
}
