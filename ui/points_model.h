// The points behind an analysis plot as a Qt table model: one row per plotted
// point (point index, series, panel, every axis value, the y value, every
// stored metric). Cells are read lazily from the shared table (no item per
// cell): a run of any size opens at once. What the rows are (one reference per
// point, in point-index order) is worked out by build() on the plot's worker;
// the GUI thread only installs it. The model sorts itself (sort(): the point
// column, its default, by reversing; others on the numbers, Qt::UserRole, or
// the text; above kSortHereRows rows on a worker, the rows keeping their order
// until the sorted one is installed), copying through copyText().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <QAbstractTableModel>
#include <QModelIndexList>

#include "analysis/plot.h"

namespace scin::ui {

class PointsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  struct Content;
  using QAbstractTableModel::QAbstractTableModel;
  /// The rows of `plot` (of `table`), in point-index order: call it on a worker.
  static std::shared_ptr<const Content> build(std::shared_ptr<const analysis::AnalysisTable> table,
                                             std::shared_ptr<const analysis::PlotData> plot);
  /// Shows `content` (from build()), sorted as the last sort() asked.
  void setContent(std::shared_ptr<const Content> content);
  /// build() and setContent() here (small plots, tests).
  void setPlot(std::shared_ptr<const analysis::AnalysisTable> table, std::shared_ptr<const analysis::PlotData> plot);
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
  /// Tables longer than this are sorted on a worker (except by the point column).
  static constexpr std::size_t kSortHereRows = 20000;
  /// A sort asked for is still being worked out on a worker.
  bool sortPending() const { return sortPending_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  /// The cells of `indexes` (any model over this one) as tab-separated text with a header line.
  static QString copyText(const QModelIndexList& indexes);
  /// The stored point index of `row` when `column` is the point column (what
  /// data(Qt::UserRole) holds there), else nullopt.
  std::optional<std::uint64_t> pointIndex(int row, int column) const;

 Q_SIGNALS:
  /// A sort worked out on a worker is installed.
  void sortFinished();

 private:
  /// The reference of view row `row`.
  std::size_t ref(int row) const { return order_[static_cast<std::size_t>(row)]; }
  /// The view order of `c`'s references sorted by `column` (any thread).
  static std::vector<std::uint32_t> orderFor(const Content& c, int column, Qt::SortOrder order);
  static QVariant cellOf(const Content& c, std::size_t ref, int column, int role);
  QVariant cell(std::size_t ref, int column, int role) const { return cellOf(*content_, ref, column, role); }
  /// Whether sorting by sortColumn_ is short enough for the GUI thread.
  bool sortHere() const;
  void sortOnWorker();
  /// Shows rows in `order`; selections and other persistent indices follow their rows.
  void install(std::vector<std::uint32_t> order);

  std::shared_ptr<const Content> content_;
  std::vector<std::uint32_t> order_;  // view row -> reference
  int sortColumn_ = 0;
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
  std::uint64_t sortGeneration_ = 0;  // a worker's order is installed only if no newer sort or content came
  bool sortPending_ = false;
};

struct PointsModel::Content {
  struct Ref {
    const analysis::Facet* facet;
    const analysis::Series* series;
    const analysis::SeriesPoint* point;
  };
  enum class Kind { Index, Series, Facet, Axis, Y, Metric };
  struct Col {
    Kind kind;
    std::size_t i = 0;
    QString title;
  };
  std::shared_ptr<const analysis::AnalysisTable> table;
  std::shared_ptr<const analysis::PlotData> plot;
  std::vector<Ref> refs;                 // ascending point index
  std::vector<std::uint64_t> pointIndex; // per ref: its row's point index
  std::vector<Col> cols;
};

}  // namespace scin::ui
