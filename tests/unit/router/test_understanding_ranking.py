def test_which_n_with_a_superlative_keeps_n() -> None:
    from router.understanding.ranking import extract_ranking

    assert extract_ranking("Which 3 brands had the highest GMV in 2024?").limit == 3
    assert extract_ranking("哪3个品牌的GMV最高").limit == 3
    low = extract_ranking("which 2 regions had the lowest refund rate")
    assert (low.direction, low.limit) == ("asc", 2)


def test_at_least_and_at_most_bound_a_count_and_rank_nothing() -> None:
    from router.understanding.ranking import extract_ranking

    assert extract_ranking("products with at least 40 refunds") is None
    assert extract_ranking("customers with at most 2 orders") is None


def test_chinese_superlatives_of_length_and_price_rank() -> None:
    from router.understanding.ranking import extract_ranking

    longest, cheapest = extract_ranking("哪家航空公司的平均延误最长？"), extract_ranking("哪个产品最便宜")
    assert (longest.direction, longest.limit) == ("desc", 1) and (cheapest.direction, cheapest.limit) == ("asc", 1)


def test_a_superlative_of_one_period_ranks_one_row() -> None:
    from router.understanding.ranking import extract_ranking

    assert extract_ranking("What was our best month ever for sales?").limit == 1
    assert extract_ranking("the single worst day of 2013 for average delay").limit == 1
    assert extract_ranking("销售额最高的一天是哪天").limit == 1
    assert extract_ranking("the highest sales by day of the week").limit is None  # a cycle, not one period


def test_a_number_before_any_superlative_ranks_that_many() -> None:
    from router.understanding.ranking import extract_ranking

    longest = extract_ranking("10 longest tracks in the catalogue")
    assert (longest.direction, longest.limit) == ("desc", 10)
    cheapest = extract_ranking("5 cheapest parts, with supplier")
    assert (cheapest.direction, cheapest.limit) == ("asc", 5)
    assert extract_ranking("10 requests in 2011") is None  # a word ending in -est is no superlative


def test_which_with_any_chinese_classifier_asks_for_one() -> None:
    from router.understanding.ranking import extract_ranking

    assert extract_ranking("2020赛季哪支球队的胜率最高？").limit == 1
    assert extract_ranking("哪部电影的票房最高").limit == 1
    assert extract_ranking("哪些球队的胜率最高").limit != 1
