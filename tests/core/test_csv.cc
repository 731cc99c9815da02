// RFC 4180 quoting of the one CSV writer (core/base/csv.h), read back by its parser.
#include <gtest/gtest.h>

#include "base/csv.h"
#include "base/error.h"

namespace scin {
namespace {

TEST(Csv, PlainFieldsAreNotQuoted) {
  EXPECT_EQ(csv_field("ring"), "ring");
  EXPECT_EQ(csv_field("1.5e-3"), "1.5e-3");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, SpecialCharactersAreQuotedAndQuotesDoubled) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

TEST(Csv, RecordRoundTripsThroughTheParser) {
  const std::vector<std::string> fields = {"scin", "waves=4, paced", "\"q\"", "", "x\ny", "3.5"};
  const std::string line = csv_record(fields);
  EXPECT_EQ(line, "scin,\"waves=4, paced\",\"\"\"q\"\"\",,\"x\ny\",3.5");
  EXPECT_EQ(csv_parse_record(line), fields);
}

TEST(Csv, UnterminatedQuoteIsAnError) {
  EXPECT_THROW(csv_parse_record("a,\"b,c"), Error);
}

}  // namespace
}  // namespace scin
