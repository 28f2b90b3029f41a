-- A small hand-made warehouse (not the demo): branches, members, books and loans.
-- loans.l_member_id has a declared foreign key; loans.l_bookkey has none (a guessed join).
DROP SCHEMA IF EXISTS lending CASCADE;
CREATE SCHEMA lending;
CREATE TABLE lending.branches (branch_id integer PRIMARY KEY, branch_name text NOT NULL, city text NOT NULL);
CREATE TABLE lending.members (
    member_id integer PRIMARY KEY, member_name text NOT NULL,
    branch_id integer NOT NULL REFERENCES lending.branches(branch_id), joined_on date NOT NULL, is_active boolean NOT NULL);
CREATE TABLE lending.books (
    b_bookkey integer PRIMARY KEY, b_title text NOT NULL, b_genre text NOT NULL, b_listprice numeric(8, 2) NOT NULL);
CREATE TABLE lending.loans (
    l_loankey integer PRIMARY KEY, l_bookkey integer NOT NULL,
    l_member_id integer NOT NULL REFERENCES lending.members(member_id),
    l_loandate date NOT NULL, l_fee numeric(8, 2) NOT NULL, l_days integer NOT NULL);
INSERT INTO lending.branches VALUES (1, 'Harbor Library', 'Portsmouth'), (2, 'Hill Library', 'Bath'),
    (3, 'River Library', 'Oxford');
INSERT INTO lending.members
SELECT i, 'Member ' || i, 1 + i % 3, DATE '2024-01-01' + i, i % 4 <> 0 FROM generate_series(1, 60) i;
INSERT INTO lending.books
SELECT i, 'Book ' || i, (ARRAY['novel', 'poetry', 'history'])[1 + i % 3], 5 + i % 20 FROM generate_series(1, 40) i;
INSERT INTO lending.loans
SELECT i, 1 + i % 40, 1 + i % 60, DATE '2024-03-01' + (i % 400), (i % 7) * 1.5, 1 + i % 21
FROM generate_series(1, 500) i;
