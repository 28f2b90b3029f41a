-- The Baseball Databank tables (columns as in the CSV files, renamed to snake case: playerID -> player_id,
-- 2B -> doubles, 3B -> triples, IPouts -> ip_outs). Counting statistics are integers; a blank is NULL.
CREATE TABLE franchises (
    franch_id text NOT NULL, franch_name text NOT NULL, active text, na_assoc text
);
CREATE TABLE teams (
    year_id integer NOT NULL, lg_id text, team_id text NOT NULL, franch_id text NOT NULL, div_id text,
    rank integer, g integer, g_home integer, w integer, l integer,
    div_win text, wc_win text, lg_win text, ws_win text,
    r integer, ab integer, h integer, doubles integer, triples integer, hr integer, bb integer, so integer,
    sb integer, cs integer, hbp integer, sf integer, ra integer, er integer, era numeric(5, 2), cg integer,
    sho integer, sv integer, ip_outs integer, ha integer, hra integer, bba integer, soa integer, e integer,
    dp integer, fp numeric(5, 3), name text NOT NULL, park text, attendance integer, bpf integer, ppf integer,
    team_id_br text, team_id_lahman45 text, team_id_retro text
);
CREATE TABLE people (
    player_id text NOT NULL, birth_year integer, birth_month integer, birth_day integer,
    birth_country text, birth_state text, birth_city text,
    death_year integer, death_month integer, death_day integer,
    death_country text, death_state text, death_city text,
    name_first text, name_last text, name_given text, weight integer, height integer,
    bats text, throws text, debut date, final_game date, retro_id text, bbref_id text
);
CREATE TABLE batting (
    player_id text NOT NULL, year_id integer NOT NULL, stint integer NOT NULL, team_id text NOT NULL, lg_id text,
    g integer, ab integer, r integer, h integer, doubles integer, triples integer, hr integer, rbi integer,
    sb integer, cs integer, bb integer, so integer, ibb integer, hbp integer, sh integer, sf integer, gidp integer
);
CREATE TABLE pitching (
    player_id text NOT NULL, year_id integer NOT NULL, stint integer NOT NULL, team_id text NOT NULL, lg_id text,
    w integer, l integer, g integer, gs integer, cg integer, sho integer, sv integer, ip_outs integer,
    h integer, er integer, hr integer, bb integer, so integer, ba_opp numeric(5, 3), era numeric(6, 2),
    ibb integer, wp integer, hbp integer, bk integer, bfp integer, gf integer, r integer,
    sh integer, sf integer, gidp integer
);
CREATE TABLE salaries (
    year_id integer NOT NULL, team_id text NOT NULL, lg_id text, player_id text NOT NULL, salary bigint NOT NULL
);
CREATE TABLE awards_players (
    player_id text NOT NULL, award_id text NOT NULL, year_id integer NOT NULL, lg_id text, tie text, notes text
);
CREATE TABLE hall_of_fame (
    player_id text NOT NULL, year_id integer NOT NULL, voted_by text NOT NULL, ballots integer, needed integer,
    votes integer, inducted text NOT NULL, category text, needed_note text
);
CREATE TABLE managers (
    player_id text NOT NULL, year_id integer NOT NULL, team_id text NOT NULL, lg_id text, inseason integer NOT NULL,
    g integer, w integer, l integer, rank integer, plyr_mgr text
);
