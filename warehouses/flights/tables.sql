-- nycflights13 tables, created in the pack's schema (search_path is set by load.py). The source columns keep
-- the R package's names and are filled by COPY from the CSV files (NA = NULL); the derived columns are
-- GENERATED from them during the COPY. Clock times (dep_time, sched_dep_time, ...) are local HHMM integers;
-- time_hour is the scheduled hour as an instant (timestamptz), the key shared by flights and weather.
-- Keys, foreign keys and indexes are added by constraints.sql after the bulk load.
CREATE TABLE airlines (
    carrier text NOT NULL,            -- two-letter carrier code, e.g. UA
    name    text NOT NULL
);
CREATE TABLE airports (
    faa   text             NOT NULL,  -- FAA location code, e.g. JFK
    name  text             NOT NULL,
    lat   double precision NOT NULL,
    lon   double precision NOT NULL,
    alt   integer          NOT NULL,  -- altitude in feet
    tz    smallint         NOT NULL,  -- hours from UTC (standard time)
    dst   text             NOT NULL,  -- daylight saving: A = US rules, U = unknown, N = none
    tzone text                        -- IANA time zone, e.g. America/New_York
);
CREATE TABLE planes (
    tailnum      text     NOT NULL,   -- tail number (registration), e.g. N14228
    year         smallint,            -- year manufactured
    type         text     NOT NULL,
    manufacturer text     NOT NULL,
    model        text     NOT NULL,
    engines      smallint NOT NULL,
    seats        smallint NOT NULL,
    speed        smallint,            -- cruising speed in mph (rarely known)
    engine       text     NOT NULL
);
CREATE TABLE weather (
    origin      text     NOT NULL,
    year        smallint NOT NULL,
    month       smallint NOT NULL,
    day         smallint NOT NULL,
    hour        smallint NOT NULL,    -- local (New York) hour of the observation, 0-23
    observed_at timestamp GENERATED ALWAYS AS (make_timestamp(year, month, day, hour, 0, 0)) STORED,
    temp        double precision,     -- temperature, degrees Fahrenheit
    dewp        double precision,     -- dew point, degrees Fahrenheit
    humid       double precision,     -- relative humidity, percent
    wind_dir    smallint,             -- wind direction, degrees
    wind_speed  double precision,     -- mph
    wind_gust   double precision,     -- mph
    precip      double precision NOT NULL,  -- precipitation, inches
    pressure    double precision,     -- sea level pressure, millibars
    visib       double precision NOT NULL,  -- visibility, miles
    time_hour   timestamptz NOT NULL
);
CREATE TABLE flights (
    flight_id           integer GENERATED ALWAYS AS IDENTITY,  -- row number in nycflights13::flights
    flight_date         date GENERATED ALWAYS AS (make_date(year, month, day)) STORED,
    scheduled_departure timestamp GENERATED ALWAYS AS (make_timestamp(year, month, day, hour, minute, 0)) STORED,
    actual_departure    timestamp GENERATED ALWAYS AS (
        make_timestamp(year, month, day, hour, minute, 0) + make_interval(mins => dep_delay)) STORED,
    cancelled           boolean GENERATED ALWAYS AS (dep_time IS NULL) STORED,
    year                smallint NOT NULL,
    month               smallint NOT NULL,
    day                 smallint NOT NULL,
    dep_time            smallint,            -- actual departure, local HHMM; NULL = cancelled
    sched_dep_time      smallint NOT NULL,   -- scheduled departure, local HHMM
    dep_delay           integer,             -- minutes, negative = early
    arr_time            smallint,            -- actual arrival, destination local HHMM
    sched_arr_time      smallint NOT NULL,   -- scheduled arrival, destination local HHMM
    arr_delay           integer,             -- minutes, negative = early; NULL = cancelled or diverted
    carrier             text     NOT NULL,
    flight              integer  NOT NULL,   -- flight number
    tailnum             text,
    origin              text     NOT NULL,
    dest                text     NOT NULL,
    air_time            integer,             -- minutes in the air
    distance            integer  NOT NULL,   -- miles between the airports
    hour                smallint NOT NULL,   -- scheduled departure hour
    minute              smallint NOT NULL,   -- scheduled departure minute
    time_hour           timestamptz NOT NULL -- scheduled departure hour as an instant
);
