--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: ducklake_column; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_column (
    column_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    table_id bigint,
    column_order bigint,
    column_name character varying,
    column_type character varying,
    initial_default character varying,
    default_value character varying,
    nulls_allowed boolean,
    parent_column bigint,
    default_value_type character varying,
    default_value_dialect character varying
);


--
-- Name: ducklake_column_mapping; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_column_mapping (
    mapping_id bigint,
    table_id bigint,
    type character varying
);


--
-- Name: ducklake_column_tag; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_column_tag (
    table_id bigint,
    column_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    key character varying,
    value character varying
);


--
-- Name: ducklake_data_file; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_data_file (
    data_file_id bigint NOT NULL,
    table_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    file_order bigint,
    path character varying,
    path_is_relative boolean,
    file_format character varying,
    record_count bigint,
    file_size_bytes bigint,
    footer_size bigint,
    row_id_start bigint,
    partition_id bigint,
    encryption_key character varying,
    mapping_id bigint,
    partial_max bigint
);


--
-- Name: ducklake_delete_file; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_delete_file (
    delete_file_id bigint NOT NULL,
    table_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    data_file_id bigint,
    path character varying,
    path_is_relative boolean,
    format character varying,
    delete_count bigint,
    file_size_bytes bigint,
    footer_size bigint,
    encryption_key character varying,
    partial_max bigint
);


--
-- Name: ducklake_file_column_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_file_column_stats (
    data_file_id bigint,
    table_id bigint,
    column_id bigint,
    column_size_bytes bigint,
    value_count bigint,
    null_count bigint,
    min_value character varying,
    max_value character varying,
    contains_nan boolean,
    extra_stats character varying
);


--
-- Name: ducklake_file_partition_value; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_file_partition_value (
    data_file_id bigint,
    table_id bigint,
    partition_key_index bigint,
    partition_value character varying
);


--
-- Name: ducklake_file_variant_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_file_variant_stats (
    data_file_id bigint,
    table_id bigint,
    column_id bigint,
    variant_path character varying,
    shredded_type character varying,
    column_size_bytes bigint,
    value_count bigint,
    null_count bigint,
    min_value character varying,
    max_value character varying,
    contains_nan boolean,
    extra_stats character varying
);


--
-- Name: ducklake_files_scheduled_for_deletion; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_files_scheduled_for_deletion (
    data_file_id bigint,
    path character varying,
    path_is_relative boolean,
    schedule_start timestamp with time zone
);


--
-- Name: ducklake_inlined_data_2_2; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_2_2 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    id integer,
    name bytea,
    amount numeric(9,2),
    ts character varying
);


--
-- Name: ducklake_inlined_data_2_3; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_2_3 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    id integer,
    label bytea,
    amount numeric(9,2),
    ts character varying
);


--
-- Name: ducklake_inlined_data_2_4; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_2_4 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    id integer,
    label bytea,
    amount numeric(9,2),
    ts character varying,
    score integer
);


--
-- Name: ducklake_inlined_data_3_7; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_3_7 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    region bytea,
    d character varying,
    qty integer
);


--
-- Name: ducklake_inlined_data_3_8; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_3_8 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    region bytea,
    d character varying,
    qty integer
);


--
-- Name: ducklake_inlined_data_6_11; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_6_11 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    x integer
);


--
-- Name: ducklake_inlined_data_7_13; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_7_13 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    k integer,
    v bytea
);


--
-- Name: ducklake_inlined_data_8_14; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_8_14 (
    row_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    k integer
);


--
-- Name: ducklake_inlined_data_tables; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_data_tables (
    table_id bigint,
    table_name character varying,
    schema_version bigint
);


--
-- Name: ducklake_inlined_delete_2; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_inlined_delete_2 (
    file_id bigint,
    row_id bigint,
    begin_snapshot bigint
);


--
-- Name: ducklake_macro; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_macro (
    schema_id bigint,
    macro_id bigint,
    macro_name character varying,
    begin_snapshot bigint,
    end_snapshot bigint
);


--
-- Name: ducklake_macro_impl; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_macro_impl (
    macro_id bigint,
    impl_id bigint,
    dialect character varying,
    sql character varying,
    type character varying
);


--
-- Name: ducklake_macro_parameters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_macro_parameters (
    macro_id bigint,
    impl_id bigint,
    column_id bigint,
    parameter_name character varying,
    parameter_type character varying,
    default_value character varying,
    default_value_type character varying
);


--
-- Name: ducklake_metadata; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_metadata (
    key character varying NOT NULL,
    value character varying NOT NULL,
    scope character varying,
    scope_id bigint
);


--
-- Name: ducklake_name_mapping; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_name_mapping (
    mapping_id bigint,
    column_id bigint,
    source_name character varying,
    target_field_id bigint,
    parent_column bigint,
    is_partition boolean
);


--
-- Name: ducklake_partition_column; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_partition_column (
    partition_id bigint,
    table_id bigint,
    partition_key_index bigint,
    column_id bigint,
    transform character varying
);


--
-- Name: ducklake_partition_info; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_partition_info (
    partition_id bigint,
    table_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint
);


--
-- Name: ducklake_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_schema (
    schema_id bigint NOT NULL,
    schema_uuid uuid,
    begin_snapshot bigint,
    end_snapshot bigint,
    schema_name character varying,
    path character varying,
    path_is_relative boolean
);


--
-- Name: ducklake_schema_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_schema_versions (
    begin_snapshot bigint,
    schema_version bigint,
    table_id bigint
);


--
-- Name: ducklake_snapshot; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_snapshot (
    snapshot_id bigint NOT NULL,
    snapshot_time timestamp with time zone,
    schema_version bigint,
    next_catalog_id bigint,
    next_file_id bigint
);


--
-- Name: ducklake_snapshot_changes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_snapshot_changes (
    snapshot_id bigint NOT NULL,
    changes_made character varying,
    author character varying,
    commit_message character varying,
    commit_extra_info character varying
);


--
-- Name: ducklake_sort_expression; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_sort_expression (
    sort_id bigint,
    table_id bigint,
    sort_key_index bigint,
    expression character varying,
    dialect character varying,
    sort_direction character varying,
    null_order character varying
);


--
-- Name: ducklake_sort_info; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_sort_info (
    sort_id bigint,
    table_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint
);


--
-- Name: ducklake_table; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_table (
    table_id bigint,
    table_uuid uuid,
    begin_snapshot bigint,
    end_snapshot bigint,
    schema_id bigint,
    table_name character varying,
    path character varying,
    path_is_relative boolean
);


--
-- Name: ducklake_table_column_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_table_column_stats (
    table_id bigint,
    column_id bigint,
    contains_null boolean,
    contains_nan boolean,
    min_value character varying,
    max_value character varying,
    extra_stats character varying
);


--
-- Name: ducklake_table_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_table_stats (
    table_id bigint,
    record_count bigint,
    next_row_id bigint,
    file_size_bytes bigint
);


--
-- Name: ducklake_tag; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_tag (
    object_id bigint,
    begin_snapshot bigint,
    end_snapshot bigint,
    key character varying,
    value character varying
);


--
-- Name: ducklake_view; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ducklake_view (
    view_id bigint,
    view_uuid uuid,
    begin_snapshot bigint,
    end_snapshot bigint,
    schema_id bigint,
    view_name character varying,
    dialect character varying,
    sql character varying,
    column_aliases character varying
);


--
-- Data for Name: ducklake_column; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_column VALUES (1, 2, NULL, 2, 1, 'id', 'int32', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (3, 2, NULL, 2, 3, 'amount', 'decimal(9,2)', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (4, 2, NULL, 2, 4, 'ts', 'timestamp', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (2, 2, 8, 2, 2, 'name', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (2, 8, NULL, 2, 2, 'label', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (5, 9, NULL, 2, 5, 'score', 'int32', '7', '7', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (1, 13, NULL, 3, 1, 'region', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (2, 13, NULL, 3, 2, 'd', 'date', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (3, 13, NULL, 3, 3, 'qty', 'int32', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (1, 19, 21, 6, 1, 'x', 'int32', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (1, 22, NULL, 7, 1, 'k', 'int32', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (2, 22, NULL, 7, 2, 'v', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb');
INSERT INTO public.ducklake_column VALUES (1, 27, NULL, 8, 1, 'k', 'int32', NULL, 'NULL', true, NULL, 'literal', 'duckdb');


--
-- Data for Name: ducklake_column_mapping; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_column_tag; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_column_tag VALUES (2, 1, 12, NULL, 'comment', 'identifier');


--
-- Data for Name: ducklake_data_file; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_data_file VALUES (0, 2, 3, NULL, NULL, 'ducklake-01a205b9-2455-76bb-b6ac-4d562c08fc86.parquet', true, 'parquet', 40, 1315, 422, 0, NULL, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (2, 2, 5, NULL, NULL, 'ducklake-01a205b9-246e-7057-b20f-f824cc1535d2.parquet', true, 'parquet', 20, 880, 434, 42, NULL, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (3, 2, 7, NULL, NULL, 'ducklake-01a205b9-24b7-77c9-94fc-7a530cfede23.parquet', true, 'parquet', 4, 797, 551, 62, NULL, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (5, 3, 15, NULL, NULL, 'region=eu/year=2020/ducklake-01a205b9-25ea-774c-8198-54f869028dd0.parquet', true, 'parquet', 3, 428, 300, 0, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (6, 3, 15, NULL, NULL, 'region=us/year=2020/ducklake-01a205b9-25eb-7a5b-9d2b-c70e3131539b.parquet', true, 'parquet', 3, 428, 300, 3, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (7, 3, 15, NULL, NULL, 'region=eu/year=2021/ducklake-01a205b9-25eb-7c0e-8e16-b89573565771.parquet', true, 'parquet', 5, 507, 309, 6, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (8, 3, 15, NULL, NULL, 'region=us/year=2021/ducklake-01a205b9-25eb-7304-ade2-ea6e11e4d494.parquet', true, 'parquet', 4, 427, 300, 11, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (9, 3, 15, NULL, NULL, 'region=us/year=2022/ducklake-01a205b9-25eb-73f3-b0eb-44f711ac9bb4.parquet', true, 'parquet', 5, 507, 309, 15, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (10, 3, 15, NULL, NULL, 'region=eu/year=2022/ducklake-01a205b9-25ec-714c-8b68-f458076d416c.parquet', true, 'parquet', 4, 427, 300, 20, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (11, 3, 15, NULL, NULL, 'region=eu/year=2023/ducklake-01a205b9-25ec-7b94-b323-c957b76eafee.parquet', true, 'parquet', 3, 428, 300, 24, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (12, 3, 15, NULL, NULL, 'region=us/year=2023/ducklake-01a205b9-25ec-7d70-8478-95a5b0d4d8d0.parquet', true, 'parquet', 3, 428, 300, 27, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (13, 3, 18, NULL, NULL, 'region=ap/year=2023/ducklake-01a205b9-2642-70cb-b8f3-af104d46697c.parquet', true, 'parquet', 12, 593, 321, 30, 4, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (14, 6, 20, 21, NULL, 'ducklake-01a205b9-2677-7aa0-b9c8-7c495d6070d6.parquet', true, 'parquet', 15, 253, 157, 0, NULL, NULL, NULL, NULL);
INSERT INTO public.ducklake_data_file VALUES (18, 7, 23, NULL, NULL, 'ducklake-01a205b9-26f2-7e70-ace6-4a7ac8c77605.parquet', true, 'parquet', 40, 913, 383, 0, NULL, NULL, NULL, 25);
INSERT INTO public.ducklake_data_file VALUES (21, 8, 28, NULL, NULL, 'ducklake-01a205b9-2753-7d8a-a3f4-4633c458feb6.parquet', true, 'parquet', 3, 568, 440, 0, NULL, NULL, NULL, 29);


--
-- Data for Name: ducklake_delete_file; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_file_column_stats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_file_column_stats VALUES (0, 2, 1, 186, 40, 0, '0', '39', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (0, 2, 2, 201, 40, 0, 'n0', 'n9', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (0, 2, 3, 189, 40, 0, '0.00', '58.50', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (0, 2, 4, 305, 40, 0, '2024-01-01 00:00:00', '2024-01-02 15:00:00', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (2, 2, 1, 108, 20, 0, '40', '59', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (2, 2, 2, 120, 20, 0, 'm40', 'm59', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (2, 2, 3, 108, 20, 0, '40.00', '59.00', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (2, 2, 4, 51, 20, 0, '2024-03-01 00:00:00', '2024-03-01 00:00:00', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (3, 2, 1, 41, 4, 0, '1', '4', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (3, 2, 2, 46, 4, 0, 'n1', 'n4', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (3, 2, 3, 41, 4, 0, '2.50', '7.00', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (3, 2, 4, 56, 4, 0, '2024-01-01 01:00:00', '2024-01-01 04:00:00', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (5, 3, 1, 42, 3, 0, 'eu', 'eu', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (5, 3, 2, 37, 3, 0, '2020-06-01', '2020-11-08', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (5, 3, 3, 37, 3, 0, '0', '4', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (6, 3, 1, 42, 3, 0, 'us', 'us', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (6, 3, 2, 37, 3, 0, '2020-07-11', '2020-12-18', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (6, 3, 3, 37, 3, 0, '1', '5', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (7, 3, 1, 49, 5, 0, 'eu', 'eu', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (7, 3, 2, 45, 5, 0, '2021-01-27', '2021-12-13', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (7, 3, 3, 45, 5, 0, '6', '14', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (8, 3, 1, 33, 4, 0, 'us', 'us', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (8, 3, 2, 41, 4, 0, '2021-03-08', '2021-11-03', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (8, 3, 3, 41, 4, 0, '7', '13', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (9, 3, 1, 49, 5, 0, 'us', 'us', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (9, 3, 2, 45, 5, 0, '2022-01-22', '2022-12-08', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (9, 3, 3, 45, 5, 0, '15', '23', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (10, 3, 1, 33, 4, 0, 'eu', 'eu', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (10, 3, 2, 41, 4, 0, '2022-03-03', '2022-10-29', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (10, 3, 3, 41, 4, 0, '16', '22', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (11, 3, 1, 42, 3, 0, 'eu', 'eu', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (11, 3, 2, 37, 3, 0, '2023-01-17', '2023-06-26', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (11, 3, 3, 37, 3, 0, '24', '28', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (12, 3, 1, 42, 3, 0, 'us', 'us', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (12, 3, 2, 37, 3, 0, '2023-02-26', '2023-08-05', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (12, 3, 3, 37, 3, 0, '25', '29', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (13, 3, 1, 49, 12, 0, 'ap', 'ap', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (13, 3, 2, 47, 12, 0, '2023-01-01', '2023-01-01', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (13, 3, 3, 70, 12, 0, '0', '11', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (14, 6, 1, 84, 15, 0, '0', '14', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (18, 7, 1, 186, 40, 0, '0', '39', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (18, 7, 2, 217, 40, 0, 'a0', 'c39', NULL, NULL);
INSERT INTO public.ducklake_file_column_stats VALUES (21, 8, 1, 37, 3, 0, '1', '3', NULL, NULL);


--
-- Data for Name: ducklake_file_partition_value; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_file_partition_value VALUES (5, 3, 0, 'eu');
INSERT INTO public.ducklake_file_partition_value VALUES (5, 3, 1, '2020');
INSERT INTO public.ducklake_file_partition_value VALUES (6, 3, 0, 'us');
INSERT INTO public.ducklake_file_partition_value VALUES (6, 3, 1, '2020');
INSERT INTO public.ducklake_file_partition_value VALUES (7, 3, 0, 'eu');
INSERT INTO public.ducklake_file_partition_value VALUES (7, 3, 1, '2021');
INSERT INTO public.ducklake_file_partition_value VALUES (8, 3, 0, 'us');
INSERT INTO public.ducklake_file_partition_value VALUES (8, 3, 1, '2021');
INSERT INTO public.ducklake_file_partition_value VALUES (9, 3, 0, 'us');
INSERT INTO public.ducklake_file_partition_value VALUES (9, 3, 1, '2022');
INSERT INTO public.ducklake_file_partition_value VALUES (10, 3, 0, 'eu');
INSERT INTO public.ducklake_file_partition_value VALUES (10, 3, 1, '2022');
INSERT INTO public.ducklake_file_partition_value VALUES (11, 3, 0, 'eu');
INSERT INTO public.ducklake_file_partition_value VALUES (11, 3, 1, '2023');
INSERT INTO public.ducklake_file_partition_value VALUES (12, 3, 0, 'us');
INSERT INTO public.ducklake_file_partition_value VALUES (12, 3, 1, '2023');
INSERT INTO public.ducklake_file_partition_value VALUES (13, 3, 0, 'ap');
INSERT INTO public.ducklake_file_partition_value VALUES (13, 3, 1, '2023');


--
-- Data for Name: ducklake_file_variant_stats; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_files_scheduled_for_deletion; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_files_scheduled_for_deletion VALUES (15, 'main/merged/ducklake-01a205b9-26ce-7bcf-a4b8-83f05da9534d.parquet', true, '2026-11-23 00:05:49.928474+00');
INSERT INTO public.ducklake_files_scheduled_for_deletion VALUES (16, 'main/merged/ducklake-01a205b9-26d6-7d8c-87a7-9fb8f65cfbc3.parquet', true, '2026-11-23 00:05:49.928474+00');
INSERT INTO public.ducklake_files_scheduled_for_deletion VALUES (17, 'main/merged/ducklake-01a205b9-26de-7b7d-a7c0-4d4471d4d856.parquet', true, '2026-11-23 00:05:49.928474+00');


--
-- Data for Name: ducklake_inlined_data_2_2; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_inlined_data_2_2 VALUES (40, 4, NULL, 100, '\x696e6c', 1.25, '2024-02-01 00:00:00');
INSERT INTO public.ducklake_inlined_data_2_2 VALUES (41, 4, 6, 101, NULL, NULL, NULL);


--
-- Data for Name: ducklake_inlined_data_2_3; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_inlined_data_2_4; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_inlined_data_2_4 VALUES (66, 10, NULL, 200, '\x6c617465', 2.50, '2024-04-01 00:00:00', 9);


--
-- Data for Name: ducklake_inlined_data_3_7; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_inlined_data_3_8; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_inlined_data_6_11; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_inlined_data_7_13; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_inlined_data_8_14; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_inlined_data_8_14 VALUES (3, 31, NULL, 4);


--
-- Data for Name: ducklake_inlined_data_tables; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_inlined_data_tables VALUES (2, 'ducklake_inlined_data_2_2', 2);
INSERT INTO public.ducklake_inlined_data_tables VALUES (2, 'ducklake_inlined_data_2_3', 3);
INSERT INTO public.ducklake_inlined_data_tables VALUES (2, 'ducklake_inlined_data_2_4', 4);
INSERT INTO public.ducklake_inlined_data_tables VALUES (3, 'ducklake_inlined_data_3_7', 7);
INSERT INTO public.ducklake_inlined_data_tables VALUES (3, 'ducklake_inlined_data_3_8', 8);
INSERT INTO public.ducklake_inlined_data_tables VALUES (6, 'ducklake_inlined_data_6_11', 11);
INSERT INTO public.ducklake_inlined_data_tables VALUES (7, 'ducklake_inlined_data_7_13', 13);
INSERT INTO public.ducklake_inlined_data_tables VALUES (8, 'ducklake_inlined_data_8_14', 14);


--
-- Data for Name: ducklake_inlined_delete_2; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 0, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 7, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 14, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 21, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 28, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 35, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (2, 2, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (2, 9, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (2, 16, 6);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 1, 7);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 2, 7);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 3, 7);
INSERT INTO public.ducklake_inlined_delete_2 VALUES (0, 4, 7);


--
-- Data for Name: ducklake_macro; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_macro_impl; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_macro_parameters; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_metadata; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_metadata VALUES ('version', '0.4', NULL, NULL);
INSERT INTO public.ducklake_metadata VALUES ('created_by', 'DuckDB 3a3967aa81', NULL, NULL);
INSERT INTO public.ducklake_metadata VALUES ('data_path', 'data/', NULL, NULL);
INSERT INTO public.ducklake_metadata VALUES ('encrypted', 'false', NULL, NULL);
INSERT INTO public.ducklake_metadata VALUES ('data_inlining_row_limit', '0', 'table', 3);


--
-- Data for Name: ducklake_name_mapping; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_partition_column; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_partition_column VALUES (4, 3, 0, 1, 'identity');
INSERT INTO public.ducklake_partition_column VALUES (4, 3, 1, 2, 'year');


--
-- Data for Name: ducklake_partition_info; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_partition_info VALUES (4, 3, 14, NULL);


--
-- Data for Name: ducklake_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_schema VALUES (0, '9cfcaf1a-76eb-4edb-93e1-32c434bf93e3', 0, NULL, 'main', 'main/', true);
INSERT INTO public.ducklake_schema VALUES (1, '01a205b9-2410-727a-b9db-fdc81d3b9841', 1, NULL, 'sales', 'sales/', true);


--
-- Data for Name: ducklake_schema_versions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_schema_versions VALUES (2, 2, 2);
INSERT INTO public.ducklake_schema_versions VALUES (8, 3, 2);
INSERT INTO public.ducklake_schema_versions VALUES (9, 4, 2);
INSERT INTO public.ducklake_schema_versions VALUES (13, 7, 3);
INSERT INTO public.ducklake_schema_versions VALUES (14, 8, 3);
INSERT INTO public.ducklake_schema_versions VALUES (17, 10, 3);
INSERT INTO public.ducklake_schema_versions VALUES (19, 11, 6);
INSERT INTO public.ducklake_schema_versions VALUES (22, 13, 7);
INSERT INTO public.ducklake_schema_versions VALUES (27, 14, 8);


--
-- Data for Name: ducklake_snapshot; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_snapshot VALUES (0, '2026-11-23 00:05:48.921591+00', 0, 1, 0);
INSERT INTO public.ducklake_snapshot VALUES (1, '2026-11-23 00:05:49.161992+00', 1, 2, 0);
INSERT INTO public.ducklake_snapshot VALUES (2, '2026-11-23 00:05:49.204101+00', 2, 3, 0);
INSERT INTO public.ducklake_snapshot VALUES (3, '2026-11-23 00:05:49.240056+00', 2, 3, 1);
INSERT INTO public.ducklake_snapshot VALUES (4, '2026-11-23 00:05:49.280427+00', 2, 3, 2);
INSERT INTO public.ducklake_snapshot VALUES (5, '2026-11-23 00:05:49.292217+00', 2, 3, 3);
INSERT INTO public.ducklake_snapshot VALUES (6, '2026-11-23 00:05:49.300085+00', 2, 3, 3);
INSERT INTO public.ducklake_snapshot VALUES (7, '2026-11-23 00:05:49.348388+00', 2, 3, 4);
INSERT INTO public.ducklake_snapshot VALUES (8, '2026-11-23 00:05:49.384292+00', 3, 3, 4);
INSERT INTO public.ducklake_snapshot VALUES (9, '2026-11-23 00:05:49.404668+00', 4, 3, 4);
INSERT INTO public.ducklake_snapshot VALUES (10, '2026-11-23 00:05:49.45631+00', 4, 3, 5);
INSERT INTO public.ducklake_snapshot VALUES (11, '2026-11-23 00:05:49.50706+00', 5, 3, 5);
INSERT INTO public.ducklake_snapshot VALUES (12, '2026-11-23 00:05:49.51638+00', 6, 3, 5);
INSERT INTO public.ducklake_snapshot VALUES (13, '2026-11-23 00:05:49.549058+00', 7, 4, 5);
INSERT INTO public.ducklake_snapshot VALUES (14, '2026-11-23 00:05:49.596327+00', 8, 5, 5);
INSERT INTO public.ducklake_snapshot VALUES (15, '2026-11-23 00:05:49.653476+00', 8, 5, 13);
INSERT INTO public.ducklake_snapshot VALUES (16, '2026-11-23 00:05:49.683969+00', 9, 6, 13);
INSERT INTO public.ducklake_snapshot VALUES (17, '2026-11-23 00:05:49.730465+00', 10, 6, 13);
INSERT INTO public.ducklake_snapshot VALUES (18, '2026-11-23 00:05:49.74031+00', 10, 6, 14);
INSERT INTO public.ducklake_snapshot VALUES (19, '2026-11-23 00:05:49.768164+00', 11, 7, 14);
INSERT INTO public.ducklake_snapshot VALUES (20, '2026-11-23 00:05:49.780397+00', 11, 7, 15);
INSERT INTO public.ducklake_snapshot VALUES (21, '2026-11-23 00:05:49.831476+00', 12, 7, 15);
INSERT INTO public.ducklake_snapshot VALUES (22, '2026-11-23 00:05:49.840137+00', 13, 8, 15);
INSERT INTO public.ducklake_snapshot VALUES (23, '2026-11-23 00:05:49.880453+00', 13, 8, 16);
INSERT INTO public.ducklake_snapshot VALUES (24, '2026-11-23 00:05:49.908167+00', 13, 8, 17);
INSERT INTO public.ducklake_snapshot VALUES (25, '2026-11-23 00:05:49.916959+00', 13, 8, 18);
INSERT INTO public.ducklake_snapshot VALUES (26, '2026-11-23 00:05:49.928474+00', 13, 8, 19);
INSERT INTO public.ducklake_snapshot VALUES (27, '2026-11-23 00:05:49.964689+00', 14, 9, 19);
INSERT INTO public.ducklake_snapshot VALUES (28, '2026-11-23 00:05:49.972212+00', 14, 9, 20);
INSERT INTO public.ducklake_snapshot VALUES (29, '2026-11-23 00:05:50.012383+00', 14, 9, 21);
INSERT INTO public.ducklake_snapshot VALUES (30, '2026-11-23 00:05:50.022661+00', 14, 9, 22);
INSERT INTO public.ducklake_snapshot VALUES (31, '2026-11-23 00:05:50.044024+00', 14, 9, 23);


--
-- Data for Name: ducklake_snapshot_changes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_snapshot_changes VALUES (0, 'created_schema:"main"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (1, 'created_schema:"sales"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (2, 'created_table:"main"."events"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (3, 'inserted_into_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (4, 'inlined_insert:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (5, 'inserted_into_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (6, 'inlined_delete:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (7, 'inserted_into_table:2,inlined_delete:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (8, 'altered_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (9, 'altered_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (10, 'inlined_insert:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (11, 'altered_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (12, 'altered_table:2', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (13, 'created_table:"sales"."orders"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (14, 'altered_table:3', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (15, 'inserted_into_table:3', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (16, 'created_view:"sales"."big_orders"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (17, 'created_table:"sales"."orders_v2"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (18, 'inserted_into_table:3', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (19, 'created_table:"main"."scratch"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (20, 'inserted_into_table:6', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (21, 'dropped_table:6', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (22, 'created_table:"main"."merged"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (23, 'inserted_into_table:7', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (24, 'inserted_into_table:7', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (25, 'inserted_into_table:7', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (26, 'merge_adjacent:7', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (27, 'created_table:"main"."flushed"', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (28, 'inlined_insert:8', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (29, 'inlined_insert:8', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (30, 'inline_flush:8', NULL, NULL, NULL);
INSERT INTO public.ducklake_snapshot_changes VALUES (31, 'inlined_insert:8', NULL, NULL, NULL);


--
-- Data for Name: ducklake_sort_expression; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_sort_info; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ducklake_table; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_table VALUES (2, '01a205b9-2427-70ee-aa9d-961d28ad749c', 2, NULL, 0, 'events', 'events/', true);
INSERT INTO public.ducklake_table VALUES (3, '01a205b9-258b-716c-a284-fee2298cb5f7', 13, 17, 1, 'orders', 'orders/', true);
INSERT INTO public.ducklake_table VALUES (3, '01a205b9-258b-716c-a284-fee2298cb5f7', 17, NULL, 1, 'orders_v2', 'orders/', true);
INSERT INTO public.ducklake_table VALUES (6, '01a205b9-2649-751b-a192-e143dd5cd449', 19, 21, 0, 'scratch', 'scratch/', true);
INSERT INTO public.ducklake_table VALUES (7, '01a205b9-26a5-7d59-b2df-9a226db35fb6', 22, NULL, 0, 'merged', 'merged/', true);
INSERT INTO public.ducklake_table VALUES (8, '01a205b9-270e-773d-963c-ec16342f9951', 27, NULL, 0, 'flushed', 'flushed/', true);


--
-- Data for Name: ducklake_table_column_stats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_table_column_stats VALUES (2, 1, false, NULL, '0', '200', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (2, 2, true, NULL, 'inl', 'n9', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (2, 3, true, NULL, '0.00', '59.00', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (2, 4, true, NULL, '2024-01-01 00:00:00', '2024-04-01 00:00:00', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (3, 1, false, NULL, 'ap', 'us', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (3, 2, false, NULL, '2020-06-01', '2023-08-05', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (3, 3, false, NULL, '0', '29', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (6, 1, false, NULL, '0', '14', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (7, 1, false, NULL, '0', '39', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (7, 2, false, NULL, 'a0', 'c39', NULL);
INSERT INTO public.ducklake_table_column_stats VALUES (8, 1, false, NULL, '1', '4', NULL);


--
-- Data for Name: ducklake_table_stats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_table_stats VALUES (2, 67, 67, 2992);
INSERT INTO public.ducklake_table_stats VALUES (3, 42, 42, 4173);
INSERT INTO public.ducklake_table_stats VALUES (6, 15, 15, 253);
INSERT INTO public.ducklake_table_stats VALUES (7, 40, 40, 1230);
INSERT INTO public.ducklake_table_stats VALUES (8, 4, 4, 568);


--
-- Data for Name: ducklake_tag; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_tag VALUES (2, 11, NULL, 'comment', 'event log');


--
-- Data for Name: ducklake_view; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ducklake_view VALUES (5, '84458a4d-fcc8-4875-bb4c-4971ad8ca4e1', 16, NULL, 1, 'big_orders', 'duckdb', 'SELECT region, qty FROM lake.sales.orders WHERE (qty > 20)', '');


--
-- Name: ducklake_data_file ducklake_data_file_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ducklake_data_file
    ADD CONSTRAINT ducklake_data_file_pkey PRIMARY KEY (data_file_id);


--
-- Name: ducklake_delete_file ducklake_delete_file_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ducklake_delete_file
    ADD CONSTRAINT ducklake_delete_file_pkey PRIMARY KEY (delete_file_id);


--
-- Name: ducklake_schema ducklake_schema_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ducklake_schema
    ADD CONSTRAINT ducklake_schema_pkey PRIMARY KEY (schema_id);


--
-- Name: ducklake_snapshot_changes ducklake_snapshot_changes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ducklake_snapshot_changes
    ADD CONSTRAINT ducklake_snapshot_changes_pkey PRIMARY KEY (snapshot_id);


--
-- Name: ducklake_snapshot ducklake_snapshot_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ducklake_snapshot
    ADD CONSTRAINT ducklake_snapshot_pkey PRIMARY KEY (snapshot_id);


--
-- PostgreSQL database dump complete
--


