-- A privacy zone's disguise (issue 27): a zone centred on the runner's point and cut at its radius gave the
-- point away to a spectator fitting a circle through where the runner vanished and reappeared. The area
-- hidden is now the person's disguise of that home (`PrivacyZone.Disguise`): a circle 4 × the radius wide
-- whose centre lies 1.2–2.7 radii from the point, uniformly by area, plus an uneven band. One per person and
-- home, kept until the account is deleted (not when a zone is removed or the runner leaves a run): fresh
-- draws around one home could be intersected. Shown to no one.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

CREATE TABLE privacy_zone_disguises (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id          uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- The point it was drawn for and that zone's radius (the largest since): a zone near it is the same home.
    home_latitude    double precision NOT NULL,
    home_longitude   double precision NOT NULL,
    home_metres      integer NOT NULL CHECK (home_metres BETWEEN 100 AND 1000),
    -- The hidden circle, and the band beyond it with the phases of its harmonics (degrees).
    centre_latitude  double precision NOT NULL,
    centre_longitude double precision NOT NULL,
    radius_m         double precision NOT NULL CHECK (radius_m > 0),
    band_m           double precision NOT NULL CHECK (band_m >= 0),
    phases           double precision[] NOT NULL CHECK (cardinality(phases) = 3)
);
-- split
CREATE INDEX privacy_zone_disguises_by_user ON privacy_zone_disguises (user_id);
-- split
-- Deleted only with the account, which deletes its participations too (cascading here keeps the order of
-- the two cascades from mattering).
ALTER TABLE run_participants ADD COLUMN zone_disguise_id uuid REFERENCES privacy_zone_disguises (id) ON DELETE CASCADE;
-- split

-- Zones set before: one disguise per person and identical point (their zones there, in every run, share
-- it), for the largest radius at that point. A simplification: one person's zones at nearby but different
-- points each get their own, as before this migration (accepted: zones set before it are few).
-- Drawn here from the server's secure source (a version-4 UUID's first 48 bits are random:
-- gen_random_uuid uses pg_strong_random).
CREATE FUNCTION pg_temp.zone_unit() RETURNS double precision LANGUAGE sql VOLATILE AS $$
    SELECT ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12))::bit(48)::bigint / 281474976710656.0
$$;
-- split
-- The destination on the sphere of `GeoPoint` (radius 6 371 008.8 m), as `GeoPoint.moved`.
INSERT INTO privacy_zone_disguises (user_id, home_latitude, home_longitude, home_metres, centre_latitude, centre_longitude,
                                    radius_m, band_m, phases)
SELECT user_id, lat, lon, metres,
       degrees(asin(sin(radians(lat)) * cos(angle) + cos(radians(lat)) * sin(angle) * cos(heading))),
       ((lon + degrees(atan2(sin(heading) * sin(angle) * cos(radians(lat)),
                             cos(angle) - sin(radians(lat)) * sin(asin(sin(radians(lat)) * cos(angle)
                                                                   + cos(radians(lat)) * sin(angle) * cos(heading)))))
         + 540)::numeric % 360 - 180)::double precision,
       4 * metres, band, phases
FROM (
    SELECT user_id, lat, lon, metres,
           metres * sqrt(1.44 + (7.29 - 1.44) * pg_temp.zone_unit()) / 6371008.8 AS angle,
           2 * pi() * pg_temp.zone_unit() AS heading,
           metres * (0.2 + 0.2 * pg_temp.zone_unit()) AS band,
           ARRAY[360 * pg_temp.zone_unit(), 360 * pg_temp.zone_unit(), 360 * pg_temp.zone_unit()] AS phases
    FROM (
        SELECT user_id, zone_latitude AS lat, zone_longitude AS lon, max(zone_metres) AS metres
        FROM run_participants WHERE zone_latitude IS NOT NULL
        GROUP BY user_id, zone_latitude, zone_longitude
    ) points
    OFFSET 0
) draws;
-- split
UPDATE run_participants p SET zone_disguise_id = d.id
FROM privacy_zone_disguises d
WHERE d.user_id = p.user_id AND d.home_latitude = p.zone_latitude AND d.home_longitude = p.zone_longitude;
-- split

-- A zone is whole or absent: never shown without its disguise.
ALTER TABLE run_participants ADD CONSTRAINT run_participants_zone_whole CHECK (
    num_nulls(zone_latitude, zone_longitude, zone_metres, zone_disguise_id) IN (0, 4));
-- split
DROP FUNCTION pg_temp.zone_unit();
