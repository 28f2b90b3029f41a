-- Primary keys, foreign keys and join indexes, added after the bulk load (faster than row by row).
ALTER TABLE franchises ADD PRIMARY KEY (franch_id);
ALTER TABLE teams      ADD PRIMARY KEY (year_id, team_id);
ALTER TABLE people     ADD PRIMARY KEY (player_id);
ALTER TABLE batting    ADD PRIMARY KEY (player_id, year_id, stint);
ALTER TABLE pitching   ADD PRIMARY KEY (player_id, year_id, stint);
ALTER TABLE managers   ADD PRIMARY KEY (player_id, year_id, team_id, inseason);

ALTER TABLE teams    ADD FOREIGN KEY (franch_id) REFERENCES franchises (franch_id);
ALTER TABLE batting  ADD FOREIGN KEY (player_id) REFERENCES people (player_id);
ALTER TABLE batting  ADD FOREIGN KEY (year_id, team_id) REFERENCES teams (year_id, team_id);
ALTER TABLE pitching ADD FOREIGN KEY (player_id) REFERENCES people (player_id);
ALTER TABLE pitching ADD FOREIGN KEY (year_id, team_id) REFERENCES teams (year_id, team_id);
ALTER TABLE managers ADD FOREIGN KEY (year_id, team_id) REFERENCES teams (year_id, team_id);

CREATE INDEX ON batting (year_id, team_id);
CREATE INDEX ON pitching (year_id, team_id);
CREATE INDEX ON salaries (player_id);
CREATE INDEX ON salaries (year_id, team_id);
CREATE INDEX ON awards_players (player_id);
CREATE INDEX ON hall_of_fame (player_id);
CREATE INDEX ON managers (year_id, team_id);
