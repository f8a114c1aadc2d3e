//! Nexmark queries q3, q5, q7, q8, q11 and q12 in Flink SQL, as `nexmark-flink` states them, over the
//! tables of a `'connector' = 'nexmark'` source (see the [parent module](super) for their
//! columns). The tests check each against a sequential computation; the throughput report
//! measures them.
//!
//! ```
//! use differential_temporal::io::nexmark::queries::Q7;
//! assert!(Q7.contains("TUMBLE(TABLE bid"));
//! ```

/// Flink's q3, local item suggestion: who sells in category 10 from Oregon, Idaho or
/// California, and which auctions (a regular join and a filter on the person's state).
pub const Q3: &str = "
    SELECT P.name, P.city, P.state, A.id
    FROM auction AS A INNER JOIN person AS P on A.seller = P.id
    WHERE A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')";

/// Flink's q5: the auctions with the most bids in each 10 s window sliding by 2 s.
pub const Q5: &str = "
    SELECT AuctionBids.auction, AuctionBids.num
     FROM (
       SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
       FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
       GROUP BY auction, window_start, window_end
     ) AS AuctionBids
     JOIN (
       SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
       FROM (
         SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
         FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
         GROUP BY auction, window_start, window_end
       ) AS CountBids
       GROUP BY CountBids.starttime, CountBids.endtime
     ) AS MaxBids
     ON AuctionBids.starttime = MaxBids.starttime AND
        AuctionBids.endtime = MaxBids.endtime AND
        AuctionBids.num >= MaxBids.maxn";

/// Flink's q7: the bids at the highest price of each 10 s tumbling window.
pub const Q7: &str = "
    SELECT B.auction, B.bidder, B.price, B.dateTime, B.extra
    FROM bid B
    JOIN (
      SELECT MAX(price) AS maxprice, window_end AS dateTime
      FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY window_start, window_end
    ) B1
    ON B.price = B1.maxprice
    WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime";

/// Flink's q8: the people who opened an auction in the 10 s window they joined in.
pub const Q8: &str = "
    SELECT P.id, P.name, P.starttime
    FROM (
      SELECT id, name, window_start AS starttime, window_end AS endtime
      FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY id, name, window_start, window_end
    ) P
    JOIN (
      SELECT seller, window_start AS starttime, window_end AS endtime
      FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY seller, window_start, window_end
    ) A
    ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime";

/// Flink's q11: each bidder's bids in sessions closed by 10 s without a bid.
pub const Q11: &str = "
    SELECT B.bidder, count(*) AS bid_count,
        SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
        SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
    FROM bid B
    GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)";

/// Flink's q12: each bidder's bids in 10 s tumbling windows of processing time. The bid table
/// declares `p_time AS PROCTIME()`; its windows follow the environment's processing-time clock
/// ([`ProcessingClock`](crate::plan::ProcessingClock)), so they depend on how the bids are cut
/// into system times.
pub const Q12: &str = "
    SELECT bidder, count(*) as bid_count, window_start, window_end
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
    GROUP BY bidder, window_start, window_end";
