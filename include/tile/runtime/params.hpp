// tile/runtime/params.hpp — kernel parameters kept in a struct. An engine that keeps a kernel's
// arguments in a struct adapted with Boost.Hana (BOOST_HANA_DEFINE_STRUCT, or
// BOOST_HANA_ADAPT_STRUCT for a struct it cannot change) launches with it in their place:
//
//   struct add_args {
//     BOOST_HANA_DEFINE_STRUCT(add_args, (tile::buffer<float>, x), (tile::buffer<float>, y),
//                              (tile::buffer<float>, out), (int, n));
//   };
//   add[grid](args, "BLOCK"_c = 1024);  // as add[grid](args.x, args.y, args.out, args.n, …)
//
// The members, in order, are the kernel's runtime arguments (a struct may also stand for some of
// them, beside positional ones); they are checked at compile time as positional arguments are,
// with the messages naming the struct. The members are passed by reference: nothing is copied.
// <tile/tile.hpp> includes this header, and this header Boost.Hana's two macros.
#pragma once

#include <tuple>
#include <type_traits>

#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>  // BOOST_HANA_ADAPT_STRUCT, for the user
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/define_struct.hpp>  // BOOST_HANA_DEFINE_STRUCT, for the user
#include <boost/hana/second.hpp>
#include <boost/hana/unpack.hpp>

#include "tile/runtime/kernel.hpp"

namespace tile::detail {

/// A struct Boost.Hana knows (hana::Struct): its members, by reference, in declaration order.
template <class T>
struct param_struct<T, std::enable_if_t<boost::hana::Struct<T>::value>> : std::true_type {
  template <class S>
  static auto members(S& s) {
    return boost::hana::unpack(boost::hana::accessors<T>(),
                               [&](auto... a) { return std::forward_as_tuple(boost::hana::second(a)(s)...); });
  }
};

}  // namespace tile::detail
