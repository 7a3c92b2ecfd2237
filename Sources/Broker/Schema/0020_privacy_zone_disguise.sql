-- A privacy zone's disguise (issue 27): a zone centred on the runner's point and cut at its radius gave the
-- point away to a spectator fitting a circle through where the runner vanished and reappeared. The area
-- hidden is now centred away from the point, larger, with an uneven edge, by random numbers drawn once for
-- the zone (`PrivacyZone.Disguise`, ratios of `zone_metres`): shown to no one, kept while the zone is.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

ALTER TABLE run_participants
    ADD COLUMN zone_bearing double precision CHECK (zone_bearing >= 0 AND zone_bearing < 360),
    ADD COLUMN zone_offset  double precision CHECK (zone_offset BETWEEN 1.2 AND 1.8),
    ADD COLUMN zone_margin  double precision CHECK (zone_margin BETWEEN 0.1 AND 0.3),
    ADD COLUMN zone_band    double precision CHECK (zone_band BETWEEN 0.2 AND 0.4),
    ADD COLUMN zone_phases  double precision[] CHECK (cardinality(zone_phases) = 3);
-- split

-- Zones set before: their numbers drawn here, from the server's secure source (a version-4 UUID's first 48
-- bits are random: gen_random_uuid uses pg_strong_random), one draw per row and number.
CREATE FUNCTION pg_temp.zone_unit() RETURNS double precision LANGUAGE sql VOLATILE AS $$
    SELECT ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12))::bit(48)::bigint / 281474976710656.0
$$;
-- split
UPDATE run_participants SET
    zone_bearing = 360 * pg_temp.zone_unit(),
    zone_offset  = 1.2 + 0.6 * pg_temp.zone_unit(),
    zone_margin  = 0.1 + 0.2 * pg_temp.zone_unit(),
    zone_band    = 0.2 + 0.2 * pg_temp.zone_unit(),
    zone_phases  = ARRAY[360 * pg_temp.zone_unit(), 360 * pg_temp.zone_unit(), 360 * pg_temp.zone_unit()]
WHERE zone_latitude IS NOT NULL;
-- split

-- A zone is whole or absent: never shown without its disguise.
ALTER TABLE run_participants ADD CONSTRAINT run_participants_zone_whole CHECK (
    num_nulls(zone_latitude, zone_longitude, zone_metres, zone_bearing, zone_offset, zone_margin, zone_band, zone_phases) IN (0, 8));
-- split
DROP FUNCTION pg_temp.zone_unit();
