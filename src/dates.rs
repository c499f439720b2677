//! Dates as the page shows them: UTC, ISO, computed with integer maths (no clock or
//! time zone of the browser's).

/// The day `ms` (since the Unix epoch) falls on, in UTC, as 2026-12-21 (integer maths:
/// days to a civil date, after Howard Hinnant's algorithm).
pub fn day_of(ms: i64) -> String {
    let z = ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// "2026-12-06 09:14 UTC": when a file changed (UTC, integer maths).
pub fn moment_of(ms: i64) -> String {
    let minutes = ms.div_euclid(60_000).rem_euclid(24 * 60);
    format!("{} {:02}:{:02} UTC", day_of(ms), minutes / 60, minutes % 60)
}

/// The first millisecond (UTC) of a day written as 2026-12-21, as a date input gives it;
/// `None` for anything else (integer maths: a civil date to days, Hinnant's inverse).
pub fn day_start(day: &str) -> Option<i64> {
    let mut parts = day.trim().splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, date) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&month) || !(1..=31).contains(&date) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + date - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let ms = (era * 146_097 + doe - 719_468) * 86_400_000;
    // 2026-02-31 is no day: it would read back as another.
    (day_of(ms) == format!("{year:04}-{month:02}-{date:02}")).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_days_start_reads_back_as_that_day() {
        assert_eq!(day_start("1970-01-01"), Some(0));
        assert_eq!(day_start("2026-12-06"), Some(1_796_515_200_000));
        assert_eq!(day_start("2000-02-29"), Some(951_782_400_000));
        assert_eq!(day_start("2026-02-31"), None);
        assert_eq!(day_start("yesterday"), None);
        assert_eq!(day_start(""), None);
    }

    #[test]
    fn days_fall_on_their_calendar_dates() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
        assert_eq!(day_of(1_796_515_200_000 - 1), "2026-12-05");
        assert_eq!(day_of(1_796_515_200_000), "2026-12-06");
    }

    #[test]
    fn moments_read_to_the_minute() {
        assert_eq!(moment_of(1_796_515_200_000 + 9 * 3_600_000 + 14 * 60_000 + 59_999), "2026-12-06 09:14 UTC");
    }
}
